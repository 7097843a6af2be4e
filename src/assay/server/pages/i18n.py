"""The pages' message catalogues (``messages/<lang>.json``) and the choice of language.

Every string a page shows comes from a catalogue: the server renders the frame with it and
hands the same catalogue to the page's script. The language is the remembered choice (the
``assay_lang`` cookie the switch sets) or else the best of the browser's ``Accept-Language``.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

LANGUAGES = ("zh", "en")
DEFAULT_LANGUAGE = "en"
LANG_COOKIE = "assay_lang"
HTML_LANG = {"zh": "zh-CN", "en": "en"}


CATALOGUES = ("{lang}.json", "team.{lang}.json", "phrases.{lang}.json")
"""The files of a language's catalogue: the pages' own messages, those of the team's pages
(ownership, users and tokens, evaluator versions), and ``phrase.<code>`` for each message the
product writes under a code (``core.messages``: reasons, API errors), kept apart so that they
grow without meeting."""


@functools.cache
def catalogue(lang: str) -> dict[str, str]:
    """The messages of ``lang`` (one of ``LANGUAGES``), read once from the package."""
    messages: dict[str, str] = {}
    for name in CATALOGUES:
        path = resources.files(__package__).joinpath("messages", name.format(lang=lang))
        messages.update(json.loads(path.read_text(encoding="utf-8")))
    return messages


def pick_language(cookie: str | None, accept_language: str | None) -> str:
    """The remembered choice when it is one we speak, else the browser's preference."""
    if cookie in LANGUAGES:
        return cookie
    return from_accept_language(accept_language or "")


def from_accept_language(header: str) -> str:
    """The language of ``LANGUAGES`` that ``Accept-Language`` ranks highest (``zh-CN;q=0.9``)."""
    ranked: list[tuple[float, int, str]] = []
    for order, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in LANGUAGES and quality > 0:
            ranked.append((-quality, order, primary))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE


def message(lang: str, key: str, **values: Any) -> str:
    """One message with its ``{name}`` placeholders filled (the key itself when missing)."""
    text = catalogue(lang).get(key, key)
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text
