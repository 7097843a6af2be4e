"""docs/reference/settings.md: every setting, from its one declaration in ``assay.settings``."""

from __future__ import annotations

from assay.settings import SECTIONS, declared
from tools.docgen.markdown import Lang, code, page, page_words, table

WORDS = page_words("settings")


def render(lang: Lang) -> str:
    words = WORDS[lang]
    sections = []
    for section, scope in SECTIONS.items():
        rows = []
        for _, var in declared():
            if var.section == section:
                name = code(var.names[0]) + "".join(f" ({words['else']} {code(n)})" for n in var.names[1:])
                rows.append((name, var.default_text(), var.meaning))
        sections.append(f"## {words['sections'][section]}\n\n{scope[0].upper() + scope[1:]}.\n\n"
                        + table(words["header"], rows))
    return page(words["title"], words["intro"], "\n".join(sections))
