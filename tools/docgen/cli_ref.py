"""docs/reference/cli.md: every command and option of ``assay``, from the Typer app.

``assay.cli.main.app`` holds every command (``main`` builds only the one it is asked for, for
start-up time; here the whole app is built, so no command is left out)."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any

import typer.main

from tools.docgen.markdown import Lang, code, page, page_words, prose, table

WORDS = page_words("cli")


def commands() -> Iterator[tuple[str, Any]]:
    """Every command and group as (``assay run``, click command), depth first, in the app's order."""
    from assay.cli.main import app

    def walk(path: str, command: Any) -> Iterator[tuple[str, Any]]:
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(f"{path} {name}", sub)

    yield from walk("assay", typer.main.get_command(app))


def type_name(annotation: Any) -> str:
    """``Optional[Path]`` → ``path``; ``int`` → ``int``."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(type_name(a) for a in kept)
    return getattr(annotation, "__name__", str(annotation)).lower()


def usage(path: str, command: Any) -> str:
    if hasattr(command, "commands"):
        return f"{path} [OPTIONS] COMMAND"
    arguments = [p for p in command.params if not p.opts or not p.opts[0].startswith("-")]
    words = [p.name.upper() if p.required else f"[{p.name.upper()}]" for p in arguments]
    return " ".join([path, "[OPTIONS]", *words])


def parameter_row(param: Any, words: dict[str, Any]) -> tuple[str, str, str, str]:
    names = ", ".join(code(n) for n in [*param.opts, *param.secondary_opts])
    is_flag = bool(getattr(param, "is_flag", False))
    kind = words["flag"] if is_flag else type_name(param.type_descriptor.annotation)
    if param.min is not None or param.max is not None:
        low, high = ("" if bound is None else bound for bound in (param.min, param.max))
        kind += f" [{low}, {high}]"
    if param.required:
        default = words["required"]
    elif param.default is None or (is_flag and param.default is False and not param.secondary_opts):
        default = ""
    else:
        default = code(param.default)
    return names, kind, default, prose(param.help)


def render(lang: Lang) -> str:
    words = WORDS[lang]
    sections = []
    for path, command in commands():
        if getattr(command, "hidden", False):
            continue
        lines = [f"## {path}", "", prose(command.help), "", f"{words['usage']}: {code(usage(path, command))}", ""]
        params = [p for p in command.params if not getattr(p, "hidden", False)]
        if params:
            lines.append(table(words["header"], (parameter_row(p, words) for p in params)))
        subcommands = getattr(command, "commands", {})
        if subcommands:
            links = ", ".join(f"[{path} {name}](#{(path + ' ' + name).replace(' ', '-')})" for name in subcommands)
            lines += [f"{words['commands']}: {links}", ""]
        sections.append("\n".join(lines).rstrip() + "\n")
    return page(words["title"], words["intro"], "\n".join(sections))
