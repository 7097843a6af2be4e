"""docs/reference/errors.md: the API's error codes, the grading error codes and every phrase
the product says, from ``assay.server.errors``, ``assay.core.result.ErrorCode`` and the pages'
catalogues (``phrases.en.json``, ``phrases.zh.json``, ``en.json``, ``zh.json``)."""

from __future__ import annotations

from itertools import groupby

from tools.docgen.markdown import Lang, attribute_docs, catalogue, code, label, page, page_words, prose, table

WORDS = page_words("errors")


def render(lang: Lang) -> str:
    from assay.core.result import ErrorCode
    from assay.server import errors

    words = WORDS[lang]
    api_docs = attribute_docs(errors)
    api_rows = [(code(getattr(errors, name)), code(name), prose(doc)) for name, doc in api_docs.items()
                if isinstance(getattr(errors, name, None), int)]
    grading_docs = attribute_docs(ErrorCode)
    grading_rows = [(code(member.value), label(lang, f"errorCode.{member.value}") or "",
                     prose(grading_docs.get(member.name, ""))) for member in ErrorCode]
    phrases = {key.removeprefix("phrase."): text for key, text in catalogue(f"phrases.{lang}").items()}
    groups = []
    for area, keys in groupby(sorted(phrases), key=lambda key: key.split(".")[0]):
        rows = [(code(key), code(phrases[key])) for key in keys]
        groups.append(f"### {area}\n\n" + table(words["phrases_header"], rows))
    body = (f"## {words['api']}\n\n{words['api_intro']}\n\n" + table(words["api_header"], api_rows)
            + f"\n## {words['grading']}\n\n{words['grading_intro']}\n\n" + table(words["grading_header"], grading_rows)
            + f"\n## {words['phrases']}\n\n{words['phrases_intro']}\n\n" + "\n".join(groups))
    return page(words["title"], words["intro"], body)
