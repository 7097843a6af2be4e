"""docs/reference/api.md: every route of ``assay serve``, from the OpenAPI document of its
FastAPI app (the one ``/openapi.json`` serves): method, path, summary, parameters, body,
responses, and the schemas they name."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from tools.docgen.markdown import Lang, code, page, page_words, prose, schema_type, table

WORDS = page_words("api")
METHODS = ("get", "post", "put", "patch", "delete")


def openapi() -> dict[str, Any]:
    """The app's OpenAPI document, built as ``assay serve`` builds it (no server is started and
    nothing is written but a database file in a temporary folder, never opened)."""
    from assay.server.app import create_app
    from assay.settings import Settings

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'reference.db'}"
        return create_app(Settings.from_env({"ASSAY_DATABASE_URL": url})).openapi()


def _link(name: str) -> str:
    return f"[{name}](#{name.lower()})"


def _schema_name(content: dict[str, Any]) -> str:
    kinds = []
    for media, spec in content.items():
        schema = spec.get("schema", {})
        kinds.append(f"{schema_type(schema, _link)} ({code(media)})" if schema else code(media))
    return ", ".join(kinds)


def operation(method: str, path: str, op: dict[str, Any], words: dict[str, Any]) -> str:
    lines = [f"### {method.upper()} {path}", "", f"**{prose(op.get('summary', ''))}**", ""]
    if op.get("description"):
        lines += [prose(op["description"]), ""]
    lines += [words["auth"] if op.get("security") else words["open"], ""]
    params = op.get("parameters", [])
    if params:
        rows = [(code(p["name"]), p["in"], schema_type(p.get("schema", {}), _link),
                 words["yes"] if p.get("required") else words["no"], prose(p.get("description", "")))
                for p in params]
        lines.append(table(words["parameters"], rows))
    body = op.get("requestBody")
    if body:
        lines += [f"{words['body']}: {_schema_name(body.get('content', {}))}", ""]
    replies = [(code(status), prose(reply.get("description", "")), _schema_name(reply.get("content", {})))
               for status, reply in op.get("responses", {}).items()]
    lines.append(table(words["responses"], replies))
    return "\n".join(lines)


def schema_section(name: str, schema: dict[str, Any], words: dict[str, Any]) -> str:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [prose(schema["description"]), ""]
    required = set(schema.get("required", []))
    props = schema.get("properties", {})
    if props:
        rows = [(code(field), schema_type(prop, _link), words["yes"] if field in required else words["no"],
                 prose(prop.get("description", ""))) for field, prop in props.items()]
        lines.append(table(words["fields"], rows))
    elif "enum" in schema:
        lines += [schema_type(schema), ""]
    return "\n".join(lines)


def render(lang: Lang, document: dict[str, Any] | None = None) -> str:
    words = WORDS[lang]
    doc = document or openapi()
    by_tag: dict[str, list[str]] = {}
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                op = item[method]
                by_tag.setdefault((op.get("tags") or ["other"])[0], []).append(operation(method, path, op, words))
    sections = [f"## {tag}\n\n" + "\n".join(ops) for tag, ops in by_tag.items()]
    schemas = doc.get("components", {}).get("schemas", {})
    sections.append(f"## {words['schemas']}\n\n" + "\n".join(schema_section(n, s, words) for n, s in schemas.items()))
    return page(words["title"], words["intro"], "\n".join(sections))
