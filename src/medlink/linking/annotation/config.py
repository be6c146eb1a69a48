"""How annotation runs (:class:`AnnotatorConfig`): what it looks for, which span sources it uses and the defaults
chosen for them (docs/annotation.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from medlink.errors import MedlinkError
from medlink.linking.annotation.approximate import ApproximateNames
from medlink.linking.annotation.corpus_lexicon import CorpusLexicon
from medlink.linking.annotation.lexicon import Lexicon
from medlink.linking.annotation.tagger import SpanTagger
from medlink.linking.mentions.branches import ENTITY_BRANCHES
from medlink.options import setting
from medlink.terminology.name_statistics import SMALLEST_HEAD_SHARE


@dataclass(frozen=True)
class AnnotatorConfig:
    """max_words: the longest name looked up; min_chars: shorter spans are left out (two-letter words are mostly
    abbreviations, which count only where the text defines them); abbreviations: short forms the text defines
    are annotated as their long form; coordinations: "breast and ovarian cancer" is one mention of each
    conjunct's concept (:mod:`.coordinations`); context: negation and uncertainty are assessed; branches: only concepts
    under these tree-number prefixes are annotated (``None``: for a terminology with tree numbers, MeSH's diseases
    and chemicals, C, F03 and D, not "Patients" or "Humans"; ``()``: every concept); lexicon: what annotated
    training documents taught (:mod:`.lexicon`), over the corpus lexicon; corpus_lexicon: whether the corpus
    lexicon (``corpus``, :mod:`.corpus_lexicon`, what public corpora teach, for ``corpus_kinds`` — ``None``: every
    kind) is used, its forms taught where their out-of-fold precision is over ``lexicon_cut``; tagger: a span
    tagger whose spans join the dictionary's, each kind a witness for the other (see ``_best_supported``);
    tagged_kinds: the tagger's kinds kept (``None``: all it knows); untagged_kinds: kinds the tagger is not
    used for, whose names stand alone (see ``witnesses.tagging``); approximate: names found by trigram
    similarity (QuickUMLS-style) among the words no other span covers, linked as the name they resemble."""

    max_words: int = setting(8, "The longest name, in words, looked up in the text.", minimum=1, research=True)
    min_chars: int = setting(3, "Shorter spans are left out unless the text defines them.", minimum=1, research=True)
    abbreviations: bool = True
    coordinations: bool = setting(
        True, "Read 'breast and ovarian cancer' as one mention naming each conjunct's concept, as corpora annotate it."
    )
    context: bool = setting(True, "Mark each mention negated or uncertain by ConText triggers.")
    branches: tuple[str, ...] | None = None
    lexicon: Lexicon = field(default_factory=Lexicon)
    corpus_lexicon: bool = setting(
        True, "Use what public annotated corpora (BC5CDR, NCBI-disease) teach: their mention texts become spans."
    )
    # Chosen by cross-validation over BC5CDR and NCBI-disease documents, by the worse of the two (docs/annotation.md).
    lexicon_cut: float = setting(
        0.3, "The out-of-fold precision a corpus-lexicon form needs.", minimum=0.0, maximum=1.0, research=True
    )
    corpus: CorpusLexicon | None = None
    corpus_kinds: tuple[str, ...] | None = None
    tagger: SpanTagger | None = None
    tagged_kinds: tuple[str, ...] | None = None
    # Chosen by the worse of two held-out sets (docs/annotation.md): with the 2-layer tagger's recipe, trained on the
    # train splits, diseases are annotated better with it (NCBI-disease test 0.761 against 0.743, BC5CDR dev 0.814
    # against 0.822: the worse 0.761 against 0.743), chemicals far better (BC5CDR dev 0.855 against 0.734).
    untagged_kinds: tuple[str, ...] = setting(
        (),
        "Kinds the span tagger is not used for: their names stand without its witness.",
        metavar="KIND,…",
        research=True,
    )
    approximate: ApproximateNames | None = None
    name_checks: bool = setting(
        True,
        "Apply the terminology's own checks: short forms in capitals read as words, category words alone.",
        research=True,
    )
    # Cross-validated over BC5CDR and NCBI-disease training documents, by the worse of the two (docs/annotation.md).
    category_share: float = setting(
        0.0125,
        "A one-word name ending at least this share of the terminology's longer names is a category, no mention alone.",
        minimum=SMALLEST_HEAD_SHARE,
        maximum=1.0,
        research=True,
    )

    def __post_init__(self) -> None:
        _checked_kinds(self)


def _checked_kinds(config: AnnotatorConfig) -> None:
    unknown = [kind for kind in config.untagged_kinds if kind.casefold() not in ENTITY_BRANCHES]
    if unknown:
        known = ", ".join(sorted(ENTITY_BRANCHES))
        raise MedlinkError(f"untagged_kinds: no kind {unknown[0]!r}; the kinds are {known}")
