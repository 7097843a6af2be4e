"""``store.clean``: the NUL escape PostgreSQL needs reads back exactly, whatever the text holds
(the escape character itself included), and leaves text without NUL or U+FFFF untouched."""

from __future__ import annotations

import pytest

from assay.store.clean import MARK, escape, restore, storable

TEXTS = ["", "plain", "\x00", "a\x00b", MARK, MARK + "0", MARK + "1", "\x00" + MARK + "1\x00", MARK * 3 + "0",
         "中文\x00", "\\u0000"]


@pytest.mark.parametrize("text", TEXTS)
def test_escaped_text_has_no_nul_and_reads_back_exactly(text):
    escaped = escape(text)
    assert "\x00" not in escaped
    assert restore(escaped) == text


def test_json_values_and_keys_read_back_exactly():
    value = {"a\x00": ["x\x00y", {MARK: 1, "k": None}], "n": 1.5, "t": True}
    escaped = escape(value)
    assert "\x00" not in repr(escaped)
    assert restore(escaped) == value


def test_text_without_nul_or_the_mark_is_the_same_object():
    text = "nothing to escape"
    assert escape(text) is text and restore(text) is text


def test_storable_replaces_nul_in_names():
    assert storable({"a\x00": ["b\x00"]}) == {"a\ufffd": ["b\ufffd"]}
