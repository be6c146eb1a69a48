"""The other texts a mention is searched as, beside the text itself: its document's short forms spelled out, its
clinical shorthand spelled out and British spellings made American, and the terminology name a salt, a labelled
compound, an anion, a possessive eponym or a condition written with its cause stands for."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from medlink.linking.mentions.abbreviations import expand_abbreviations
from medlink.linking.mentions.respelling import (
    acid_name,
    eponym_names,
    says_the_same_cause,
    standard_spelling,
    without_cause,
    without_isotope_label,
    without_salt,
)
from medlink.linking.mentions.shorthand import ShorthandLexicon, links_better
from medlink.linking.results import LinkResult, Stage
from medlink.terminology import Terminology


@dataclass(frozen=True)
class MentionRewriter:
    """Rewrites mentions for one terminology. ``shorthand``: the lexicon to spell out (``None``: none); ``respell``:
    American spellings and named forms; ``matches_exactly``: whether an exact sieve links a text (a name, an added
    synonym or a training mention)."""

    terminology: Terminology
    shorthand: ShorthandLexicon | None
    respell: bool
    matches_exactly: Callable[[str], bool]

    def is_name(self, text: str) -> bool:
        """Whether ``text`` normalizes to a terminology name (guides short forms, salts, eponyms and composites)."""
        return self.terminology.has_normalized(self.terminology.normalizer(text))

    def expanded(self, original: str, document: str | None) -> str:
        """``original`` with the short forms ``document`` defines spelled out, unless a short form inside a longer
        name would turn it into a string that is no name: "HIV Infections" is a MeSH name, "Human Immunodeficiency
        Virus Infections" is not, and searched it finds the virus. A mention that is only a short form ("OMD") is
        always spelled out: the document's definition beats whatever else those letters name."""
        expanded = expand_abbreviations(original, document, self.is_name)
        inside_name = expanded != original and len(original.split()) > 1
        if inside_name and not self.is_name(expanded) and self.is_name(original):
            return original
        return expanded

    def respelled(self, text: str) -> tuple[str, str]:
        """``text`` with its clinical shorthand spelled out and British spellings made American, as configured, and
        how it was changed."""
        spelled = self.shorthand.expand(text) if self.shorthand is not None else text
        how = "clinical shorthand spelled out" if spelled != text else "respelled"
        return (standard_spelling(spelled) if self.respell else spelled), how

    def other_readings(self, texts: Mapping[int, str]) -> tuple[dict[int, tuple[str, str]], dict[int, tuple[str, str]]]:
        """For each text (by position), its respelling when that differs, and the name it (respelled) stands for
        when there is one, each with how it was found."""
        spelled = {}
        for i, text in texts.items():
            other, how = self.respelled(text)
            if other != text:
                spelled[i] = (other, how)
        named = {}
        for i, text in texts.items():
            if (found := self.named_form(spelled[i][0] if i in spelled else text)) is not None:
                named[i] = found
        return spelled, named

    def named_form(self, written: str) -> tuple[str, str] | None:
        """The terminology name a salt ("metformin hydrochloride"), a labelled compound ("[3H]-L-arginine"), an anion
        ("metrizoate") or a possessive eponym ("Parkinson's") stands for, and how it was found; ``None`` when there
        is none (or respelling is off). Only names: no encoder call is spent on a guess."""
        if not self.respell:
            return None
        if (bare := without_salt(written)) != written and self.is_name(bare):
            return bare, "salt searched as its parent drug"
        if (bare := without_isotope_label(written)) != written.strip() and self.is_name(bare):
            return bare, "isotope label dropped:"
        if (acid := acid_name(written)) != written.strip() and self.is_name(acid):
            return acid, "anion searched as its acid"
        for name in eponym_names(written):
            if self.is_name(name):
                return name, "eponym searched as"
        if (condition := without_cause(written)) != written.strip() and self.matches_exactly(condition):
            return condition, "cause dropped:"
        return None


Reading = tuple[tuple[str, str], LinkResult]  # (the text searched, how it was found), its result


def best_reading(
    text: str, result: LinkResult, spelled: Reading | None, named: Reading | None
) -> tuple[str, LinkResult, list[str]]:
    """Which reading of a mention links it, and notes saying how: as written (``text``, ``result``); respelled, when
    that links better; or the name it stands for, when only that matches exactly, unless what was found writes the
    cause the mention writes ("drug-induced hepatitis" found as "Hepatitis, Drug-Induced")."""
    notes = []
    if spelled is not None and links_better(spelled[1], result):
        ((text, how), result) = spelled
        notes.append(f"{how} as {text!r}")
    if (
        named is not None
        and result.stage is not Stage.EXACT
        and named[1].stage is Stage.EXACT
        and not says_the_same_cause(text, result.matched_name or "")
    ):
        ((text, how), result) = named
        notes.append(f"{how} {text!r}")
    return text, result, notes
