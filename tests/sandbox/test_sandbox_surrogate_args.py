"""A lone surrogate in a host function's argument (`chr(0xd800)`, not valid Unicode) never
reaches a host function as another string. The worker used to encode its frames with
errors="replace", so in `rmh serve` `write('keep\\ud800.md', ..., overwrite=True)` overwrote
the note 'keep?.md' and `write('x.md', 'a\\ud800')` wrote 'a?' without a word. Now every host
call holding one is refused on the host (the worker is hostile: a cell that writes its own
call frame, the surrogate spelt as a JSON escape, is refused too; before, a host function
echoing it made `Sandbox.exec` raise UnicodeEncodeError), with an error in the cell, and the
host function never runs. A high surrogate then a low one (`chr(0xd83d) + chr(0xde00)`),
which JSON can only spell as the escapes of another character, is refused in the worker.
Every real tier (conftest.py's `host`)."""

from __future__ import annotations

from sandbox.channel import FrameReader, encode

from .conftest import Host, run_attack

_HONEST = """
r = []
for call in (lambda: write('keep' + chr(0xd800) + '.md', 'replaced'),
             lambda: write('fresh.md', 'text' + chr(0xdfff)),
             lambda: read('keep' + chr(0xd800) + '.md'),
             lambda: ping({'k': ['deep' + chr(0xdc80)]}),
             lambda: ping(**{'x' + chr(0xd800): 1}),
             lambda: write('pair.md', 'x' + chr(0xd83d) + chr(0xde00))):
    try:
        r.append(('returned', call()))
    except Exception as exc:
        r.append((type(exc).__name__, str(exc)))
r
"""

# The hostile variant: the cell reaches the worker's channel through a stub's closure and
# sends the call frame itself, the surrogate as a JSON escape (valid UTF-8 on the wire).
_HOSTILE = """
import json, os, struct
ch = next(c.cell_contents for c in write.__closure__
          if hasattr(c.cell_contents, 'channel')).channel
worker = next(c.cell_contents for c in write.__closure__
              if hasattr(c.cell_contents, 'channel'))
ch = worker.channel
frame = {'t': 'call', 'id': worker.exec_id, 'fn': 'ping', 'args': ['echo' + chr(0xd800)],
         'kwargs': {}}
data = json.dumps(frame).encode('ascii')
with ch.lock:
    os.write(ch.out_fd, struct.pack('>I', len(data)) + data)
    reply = ch.recv()
reply
"""


def _keep(host: Host) -> None:
    if not (host.vault_dir / "keep?.md").exists():
        host.vault.write("keep?.md", "precious\n")


def test_lone_surrogate_argument_is_refused(host: Host) -> None:
    _keep(host)
    result = run_attack(host, _HONEST)
    assert result.ok, result.to_json()
    assert "returned" not in str(result.value), result.value
    assert str(result.value).count("lone surrogate") == 6, result.value
    assert (host.vault_dir / "keep?.md").read_text() == "precious\n"
    assert not (host.vault_dir / "fresh.md").exists()
    # two lone surrogates side by side, high then low, are spelt as two JSON escapes that
    # read back as one character: write() wrote 'x\U0001f600' (an emoji the cell never had)
    assert not (host.vault_dir / "pair.md").exists()


def test_hostile_call_frame_with_a_lone_surrogate_is_refused(host: Host) -> None:
    _keep(host)
    result = run_attack(host, _HOSTILE)
    assert result.ok, result.to_json()
    assert "'ok': False" in str(result.value) and "lone surrogate" in str(result.value), \
        result.value
    assert (host.vault_dir / "keep?.md").read_text() == "precious\n"


def test_host_frame_with_a_lone_surrogate_is_encoded() -> None:
    """A reply the host sends that holds one (a host function's result) is spelt with JSON
    escapes, not an UnicodeEncodeError out of `Sandbox.exec`."""
    frame = {"t": "reply", "ok": True, "value": "a\ud800"}
    assert FrameReader(1 << 20).feed(encode(frame)) == [frame]


# A hostile worker's own result frame: the value and every text of its error hold a lone
# surrogate, spelt as JSON escapes (valid UTF-8 on the wire; the honest worker sends "?").
# This cell makes the worker send it in place of the NEXT cell's result (the exec loop took
# `channel.send` before this cell ran).
_FORGE_NEXT_RESULT = """
import json, os, struct
ch = next(c.cell_contents for c in write.__closure__
          if hasattr(c.cell_contents, 'channel')).channel


def send(frame, honest=ch.send):
    if frame.get('t') != 'result':
        return honest(frame)
    del ch.send
    forged = {'t': 'result', 'id': frame['id'], 'ok': False, 'value': 'v' + chr(0xd800),
              'error': {'type': 'E' + chr(0xdfff), 'message': 'm' + chr(0xdc80),
                        'traceback': 't' + chr(0xde00) + chr(0xd83d)}, 'threads': 1}
    data = json.dumps(forged).encode('ascii')
    os.write(ch.out_fd, struct.pack('>I', len(data)) + data)


ch.send = send
"""


def test_forged_result_with_lone_surrogates_is_valid_unicode(host: Host) -> None:
    """The host holds the result frame to the worker's rule: a lone surrogate in the value or
    an error's text becomes "?". Before, it reached `ExecResult` as it came, and `rmh exec`
    and `rmh repl` died with a UnicodeEncodeError traceback printing it (human and --json)."""
    assert host.sb.exec(host.code(_FORGE_NEXT_RESULT)).ok
    result = run_attack(host, "1")
    texts = [result.value, *result.to_json()["error"].values()]
    for text in texts:
        text.encode("utf-8")  # no lone surrogate left
    assert texts == ["v?", "E?", "m?", "t??"], texts
