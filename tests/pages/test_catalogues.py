"""Chinese throughout, English throughout (issue 22): every message key the pages' scripts and
the server's page code use is in both catalogues, every field of every config form has its
label and hint in both, and no message is left empty or untranslated by accident."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.core import registry
from assay.server.pages.i18n import LANGUAGES, catalogue

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "web" / "src").rglob("*.js"))
PAGE_CODE = sorted((ROOT / "src" / "assay" / "server" / "pages").glob("*.py"))
# t('key'), t("key"), and keys built from a template: t(`type.${x}`) → the prefix "type."
LITERAL = re.compile(r"""\bt\(\s*['"]([\w.]+)['"]""")
TEMPLATE = re.compile(r"""\bt\(\s*`([\w.]*)\$\{""")
PY_LITERAL = re.compile(r"""\b(?:message|t)\((?:[\w.]+,\s*)?["']([a-z]+\.[\w.]+)["']""")
LABELLED = re.compile(r"""labelled\([^,]+,\s*['"]([\w.]+)['"]""")


def keys_used() -> tuple[set[str], set[str]]:
    literal: set[str] = set()
    prefixes: set[str] = set()
    for path in SCRIPTS:
        text = path.read_text(encoding="utf-8")
        literal |= set(LITERAL.findall(text)) | set(LABELLED.findall(text))
        prefixes |= {p for p in TEMPLATE.findall(text) if p}
    for path in PAGE_CODE:
        literal |= set(PY_LITERAL.findall(path.read_text(encoding="utf-8")))
    return literal, prefixes


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_key_the_pages_use_is_in_the_catalogue(lang):
    messages = catalogue(lang)
    literal, prefixes = keys_used()
    assert len(literal) > 100, "the scan found too few keys: has the t() call changed its shape?"
    missing = sorted(key for key in literal if key not in messages)
    assert not missing, f"{lang}.json lacks {missing}"
    bare = sorted(p for p in prefixes if not any(key.startswith(p) for key in messages))
    assert not bare, f"{lang}.json has no key under {bare}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_config_field_has_a_label_and_a_hint(lang):
    messages = catalogue(lang)
    missing = []
    for grader_type, grader in registry.all_graders().items():
        if not grader.traits.form:  # the graders the pages draw a form for
            continue
        for name in grader.Config.model_json_schema()["properties"]:
            missing += [key for key in (f"schema.{grader_type}.{name}", f"schema.{grader_type}.{name}.hint")
                        if not messages.get(key)]
    assert not missing, f"{lang}.json lacks {missing}"


def test_no_message_is_empty_and_chinese_messages_are_chinese():
    zh, en = catalogue("zh"), catalogue("en")
    assert zh.keys() == en.keys()
    assert not [k for k, v in {**zh, **en}.items() if not v.strip()]
    # Left in English by mistake: a Chinese message identical to the English one, with letters,
    # that is not a name, a code or a format (those are listed).
    same = {k for k in zh if zh[k] == en[k] and re.search(r"[a-z]{3}", zh[k])}
    allowed = {"app.title", "lang.en", "lang.zh", "language.nodejs", "language.python", "preset.json_schema.name",
               "schema.json_schema.schema", "editor.template.python", "editor.template.nodejs",
               "preset.regex.flag.u", "type.llm", "phrase.json.null", "phrase.list.items",
               "schema.code.language.option.python", "schema.code.language.option.nodejs"}
    assert same <= allowed, sorted(same - allowed)


def enum_options() -> list[tuple[str, str, str]]:
    """``(grader type, field, option)`` of every enum field of the config forms the pages draw."""
    found = []
    for grader_type, grader in registry.all_graders().items():
        if not grader.traits.form:
            continue
        schema = grader.Config.model_json_schema()
        defs = schema.get("$defs", {})
        for name, field in schema["properties"].items():
            for part in [field, *field.get("anyOf", [])]:
                target = defs.get(part["$ref"].split("/")[-1], {}) if "$ref" in part else part
                found += [(grader_type, name, str(option)) for option in target.get("enum", [])]
    return found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_option_and_error_code_has_a_label(lang):
    """What a select offers (none, binary, flag ...) and every error code a result may carry are
    shown in the page's language, never as the raw value."""
    from assay.core.result import ErrorCode

    messages = catalogue(lang)
    options = enum_options()
    assert ("llm", "scale", "binary") in options and ("similarity", "normalize", "none") in options
    missing = [f"schema.{t}.{n}.option.{o}" for t, n, o in options if f"schema.{t}.{n}.option.{o}" not in messages]
    missing += [f"errorCode.{code.value}" for code in ErrorCode if f"errorCode.{code.value}" not in messages]
    assert not missing, f"{lang}.json lacks {missing}"
