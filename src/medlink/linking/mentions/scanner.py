"""Disease concepts named in free text (a patient note, an exclusion criterion), found by exact match of word
n-grams against a terminology: the linker's exact sieve applied to every span, longest first.

medlink has no mention detector, and a note's diseases are mostly written as terminology names ("type 2
diabetes", "myocardial infarction"). Each clause (text between punctuation) is normalized once with the
terminology's own normalizer and its token n-grams are looked up, longest span first, spans never overlapping.
Only concepts inside ``branches`` count (MeSH Diseases C and Mental Disorders F03 by default; ``None``: any), which
keeps out everyday words that happen to be names of chemicals or organisms. A span preceded in its clause by a negation
("no", "denies", "without", "negative for") is dropped: "no history of diabetes" does not say diabetes. Clinical
shorthand ("HTN", "T2DM"; :mod:`medlink.linking.mentions.shorthand`) is spelled out first: notes are full of it; British
spellings ("oedema") are made American (:mod:`medlink.linking.mentions.respelling`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from medlink.linking.mentions.branches import BranchScope
from medlink.linking.mentions.respelling import standard_spelling
from medlink.linking.mentions.shorthand import ShorthandLexicon, default_shorthand
from medlink.terminology import Terminology

_CLAUSES = re.compile(r"[.;:,()\[\]\n!?]+")
_NEGATIONS = frozenset({"no", "not", "denies", "denied", "without", "negative", "absence", "free", "nor"})
# a relative's disease, not the patient's: "family history of breast cancer", "her mother had diabetes"
_RELATIVES = frozenset(
    {
        "family",
        "familial",
        "mother",
        "father",
        "sister",
        "brother",
        "sibling",
        "siblings",
        "parent",
        "parents",
        "aunt",
        "uncle",
        "grandmother",
        "grandfather",
        "cousin",
        "relative",
        "relatives",
    }
)
DISEASE_BRANCHES = ("C", "F03")


@dataclass(frozen=True)
class Finding:
    """A concept named in a text, with the clause that names it and whether it is denied or a relative's."""

    concept_id: str
    clause: str
    negated: bool = False
    family: bool = False


@dataclass
class ConceptScanner:
    """Finds the concepts of ``terminology`` under ``branches`` named in a text.

    max_words: the longest span looked up (MeSH disease names rarely exceed six words).
    min_chars: spans shorter than this are ignored (two-letter tokens are mostly abbreviations of something else).
    negation_window: how many words before a span a negation still applies to.
    shorthand: the clinical shorthand spelled out before scanning (``None``: none).
    respell: British spellings made American before scanning ("oedema", "anaemia"; linking/mentions/respelling.py).
    """

    terminology: Terminology
    branches: tuple[str, ...] | None = DISEASE_BRANCHES
    max_words: int = 6
    min_chars: int = 4
    negation_window: int = 5
    shorthand: ShorthandLexicon | None = field(default_factory=default_shorthand)
    respell: bool = True
    _scope: BranchScope | None = field(init=False, repr=False)
    _negations: frozenset[str] = field(init=False, repr=False)
    _relatives: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._scope = BranchScope(self.terminology, self.branches) if self.branches else None
        # compared after normalization, which turns "denies" into "deny"
        self._negations = frozenset(self.terminology.normalizer(word) for word in _NEGATIONS)
        self._relatives = frozenset(self.terminology.normalizer(word) for word in _RELATIVES)

    def scan(self, text: str) -> tuple[str, ...]:
        """The in-scope concepts named (not negated) in ``text``, in order of first mention, each once."""
        return named(self.findings(text))

    def findings(self, text: str) -> tuple[Finding, ...]:
        """Every in-scope concept named in ``text``, negated or not, with its clause and whether it is said of a
        relative (a relative named in its clause: "breast cancer in her sister")."""
        found: list[Finding] = []
        if self.shorthand is not None:
            text = self.shorthand.expand(text)
        if self.respell:
            text = standard_spelling(text)
        for clause in _CLAUSES.split(text):
            tokens = self.terminology.normalizer(clause).split()
            # once per clause, shared by its findings: per finding, a long clause cost quadratic time and memory
            family = any(token in self._relatives for token in tokens)
            said = clause.strip()
            start = 0
            while start < len(tokens):
                width = self._longest_name(tokens, start)
                if not width:
                    start += 1
                    continue
                key = " ".join(tokens[start : start + width])
                before = tokens[max(0, start - self.negation_window) : start]
                negated = any(token in self._negations for token in before)
                for match in self.terminology.lookup_normalized(key):
                    if self._scope is None or self._scope.allows(match.concept_id):
                        found.append(Finding(match.concept_id, said, negated, family))
                start += width
        return tuple(found)

    def scan_all(self, texts: Iterable[str]) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for text in texts:
            found.update(dict.fromkeys(self.scan(text)))
        return tuple(found)

    def _longest_name(self, tokens: list[str], start: int) -> int:
        for width in range(min(self.max_words, len(tokens) - start), 0, -1):
            key = " ".join(tokens[start : start + width])
            if len(key) >= self.min_chars and self.terminology.has_normalized(key):
                return width
        return 0

    def related(self, patient: Iterable[str], trial: Iterable[str]) -> tuple[str, ...]:
        """The trial's concepts the patient has: the same concept, or one of its descendants ("Breast Neoplasms"
        for a trial on "Neoplasms")."""
        patient_set = set(patient)
        with_ancestors = set(patient_set)
        for concept in patient_set:
            with_ancestors.update(self.terminology.ancestors(concept))
        return tuple(concept for concept in trial if concept in with_ancestors)


def named(findings: Iterable[Finding]) -> tuple[str, ...]:
    """The concepts of ``findings`` that are not negated, in order of first mention, each once (what
    :meth:`ConceptScanner.scan` returns, for a caller that has the findings already)."""
    return tuple(dict.fromkeys(f.concept_id for f in findings if not f.negated))
