"""docs/reference/graders.md: every grader type in the registry, with its config fields (from
its config model), kind, cost and traits (declared on its class), and the pages' labels."""

from __future__ import annotations

import dataclasses
from typing import Any

from tools.docgen.markdown import Lang, attribute_docs, code, label, page, page_words, prose, schema_type, table

WORDS = page_words("graders")


def field_rows(type_: str, schema: dict[str, Any], lang: Lang) -> list[tuple[str, str, str, str]]:
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        zh_name = label(lang, f"schema.{type_}.{name}") if lang == "zh" else None
        shown = code(name) + (f"（{zh_name}）" if zh_name else "")
        if name in required:
            default = WORDS[lang]["required"]
        else:
            default = code(_json(prop["default"])) if "default" in prop else ""
        rows.append((shown, schema_type(prop), default, prose(prop.get("description", ""))))
    return rows


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def render(lang: Lang) -> str:
    from assay.core import registry
    from assay.core.grader import Traits

    words = WORDS[lang]
    trait_docs = attribute_docs(Traits)
    sections = []
    for type_, cls in registry.all_graders().items():
        name = label(lang, f"preset.{type_}.name") if lang == "zh" else None
        heading = f"## {type_}" + (f"（{name}）" if name and name != type_ else "")
        on = [f.name for f in dataclasses.fields(Traits)
              if f.name != "kernel" and getattr(cls.traits, f.name)]
        if cls.traits.kernel:
            on.append(f"kernel {code(cls.traits.kernel)}")
        lines = [heading, "", prose(cls.description), "",
                 words["facts"].format(kind=code(cls.kind), cost=code(cls.taxonomy.cost)) + " "
                 + words["traits"] + (", ".join(t if t.startswith("kernel") else code(t) for t in on)
                                             or words["no_traits"]) + ".", ""]
        schema = cls.Config.model_json_schema(by_alias=True)
        rows = field_rows(type_, schema, lang)
        lines.append(table(words["fields"], rows) if rows else words["no_fields"] + "\n")
        sections.append("\n".join(lines))
    legend = table(words["legend_header"],
                   ((code(name), prose(doc)) for name, doc in trait_docs.items()))
    body = "\n".join(sections) + f"\n## {words['legend']}\n\n" + legend
    return page(words["title"], words["intro"], body)
