"""What is wrong with the texts of a request, said so a client can fix it: over a length limit (named with its
value), or not text (a lone surrogate, which JSON allows and UTF-8 cannot carry)."""

from __future__ import annotations

from medlink.linking import Mention

NOT_TEXT = "holds a lone surrogate (\\ud800-\\udfff), which is not text"


def text_problems(
    items: list[str | Mention], limit: int | None, document_limit: int | None, what: str = "mentions"
) -> list[str]:
    """A document shared by many mentions is checked once."""
    problems = []
    checked: set[int] = set()  # ids of the documents already checked
    for position, item in enumerate(items):
        where = what if what == "note" else f"{what}[{position}]"
        text, document = (item.text, item.document) if isinstance(item, Mention) else (item, None)
        if limit and len(text) > limit:
            problems.append(f"{where}: {len(text):,} characters; the limit is {limit:,}")
        if not is_text(text):
            problems.append(f"{where}: {NOT_TEXT}")
        if document is None or id(document) in checked:
            continue
        checked.add(id(document))
        if document_limit and len(document) > document_limit:
            problems.append(f"{where}.document: {len(document):,} characters; the limit is {document_limit:,}")
        if not is_text(document):
            problems.append(f"{where}.document: {NOT_TEXT}")
    return problems


def is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
