"""Names a terminology glosses in parentheses: MeSH writes "Mpox (monkeypox)" and "VIP-Secreting Tumor (VIPoma)",
where the parenthesis is another name of the same concept, so the words before it name the concept too ("mpox").
A parenthesis that is not a name of the concept qualifies a homonym ("Iris (Plant)") and gives nothing; neither
does a short form in capitals ("CP (Cerebral Palsy)", "DOES (…)"), which would make "cp" or "does" a name."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from medlink.terminology.records import Concept, Name, NameKind

_GLOSSED = re.compile(r"^(?P<name>.*\S)\s+\((?P<gloss>[^()]+)\)$")


def glossed_names(concept: Concept, normalize: Callable[[str], str]) -> tuple[Name, ...]:
    """The names ``concept`` gains from its glossed names, as entry terms (none already among its names)."""
    own = {normalize(name.text) for name in concept.names}
    found: dict[str, Name] = {}
    for name in concept.names:
        match = _GLOSSED.match(name.text)
        if match is None or normalize(match["gloss"]) not in own:
            continue
        text = match["name"]
        key = normalize(text)
        if key and key not in own and key not in found and not _short_form(text):
            found[key] = Name(text, NameKind.ENTRY_TERM)
    return tuple(found.values())


def with_glossed_names(concepts: Iterable[Concept], normalize: Callable[[str], str]) -> Iterator[Concept]:
    """Each concept with the names its glosses give (:func:`glossed_names`)."""
    for concept in concepts:
        extra = glossed_names(concept, normalize)
        yield replace(concept, names=concept.names + extra) if extra else concept


def _short_form(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return not letters or all(c.isupper() for c in letters) or (" " not in text and len(text) <= 3)
