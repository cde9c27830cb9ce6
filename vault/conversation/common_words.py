"""Common English words that open sentences but are never names on their own.

A capitalised word at the start of a sentence is read as a name only when it is not one of
these (nor a stop word, weekday or month) and the conversation never writes it in lower case
(`entities.name_lexicon`). The list is fixed by hand (interjections, pronoun-like openers,
frequent verbs, adverbs and nouns that start chat sentences; prepositions and connectives that
open a sentence of an agent's reply, "Per the docs", "Via the config", "Unlike before",
"Whereas ...", and past forms of five letters, which `entities._verbal` leaves to this list,
"Added a lock", "Based on the logs"); it was not derived from LoCoMo.
"""

from __future__ import annotations

COMMON: frozenset[str] = frozenset(
    """
    absolutely actually attempt bug error fix issue lesson lessons note problem result step
    tip try update after again ago agreed ah aha alright although always amazing anyway
    anything apparently appreciate around awesome aw aww bad basically be because been best
    better big bought brought btw but bye can cheers come congrats congratulations cool could
    dear definitely did do does done dont each either else enjoy enough even ever every
    everyone everything exactly excellent fantastic feel feeling felt fine finally first for
    found from fun funny gee get getting give glad go going gone good goodbye got gotcha great
    guess had haha hahaha happy has have having he hello hey hi hmm hope how however huh i
    if im in indeed instead interesting is it its ive just keep kind know last later let lets
    life like listen little lol look looking looks lots love lovely made make making many
    maybe me meanwhile met might mine more morning most much must my nah name need needed
    never new next nice night no nobody none nope not nothing now of off oh ok okay old once
    one only oops or other otherwise our ours perfect perhaps please plus probably quite
    really recently remember right said same saw say see seems seen she should since so some
    someone something sometimes soon sorry sounds speaking still started starting such super
    sure sweet take talk talking tell thank thanks that thats the then there these they
    thing things think this those though thought through thx today together tomorrow tonight
    too totally true truly trying two um uh understood unfortunately until up us usually
    very wait want wanted was watch watching way we weekend well went were what whatever
    when where whether which while who whoa why will wish with without woah won wonderful
    work working would wow yay yeah yep yes yesterday yet you your yours yup
    per via unlike whereas overall across along among amid behind beneath beside besides beyond
    despite except inside near onto outside past toward towards underneath upon versus within
    according given therefore thus hence moreover furthermore nevertheless nonetheless
    additionally alternatively consequently similarly likewise whose whenever wherever
    added asked based ended fixed hoped liked loved moved noted saved tried used
    """.split()
)
