"""CONV5: the data export of an account with no chats (`conversations.json` holding `[]`)
reads as no conversation under `--format chatgpt|claude-ai`; before, it was refused as "not
an export of conversations"; a value of another shape is still refused."""

from __future__ import annotations

import pytest

from vault.conversation.reading import load_report
from vault.errors import ConversationFormatError


@pytest.mark.parametrize("fmt", ["chatgpt", "claude-ai"])
@pytest.mark.parametrize("text", ["[]", "\ufeff[]", " [ ]\n"])
def test_an_export_of_no_chats_is_no_conversation(fmt: str, text: str) -> None:
    got = load_report(text, fmt, "dflt")
    assert got.conversations == () and got.problems == ()


@pytest.mark.parametrize("fmt", ["chatgpt", "claude-ai"])
@pytest.mark.parametrize("text", ["{}", "[5]", "[{}]", "5", "\"x\""])
def test_a_value_of_another_shape_is_still_refused(fmt: str, text: str) -> None:
    with pytest.raises(ConversationFormatError):
        load_report(text, fmt, "dflt")
