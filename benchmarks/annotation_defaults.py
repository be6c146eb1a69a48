"""Annotation's defaults chosen by cross-validation over BC5CDR and NCBI-disease documents together (issue 60):
the corpus lexicon's cut and the span tagger on or off, each setting scored by the worse of BC5CDR Disease and
NCBI-disease document-level F1, never by one dev set.

    python benchmarks/annotation_defaults.py              # 3 outer folds over BC5CDR train + dev, NCBI train + dev
    python benchmarks/annotation_defaults.py --held-out   # the defaults on documents the lexicon never saw
    python benchmarks/annotation_defaults.py --held-out --tagger FOLDER   # another tagger (the recipe on train splits)

Cross-validation: the documents of the lexicon's four sources (``scripts/build_corpus_lexicon.py``) are split into
outer folds by a hash of their ids; for each, the lexicon is learned (with its own inner folds) from the other
folds' documents and every setting annotates the fold's documents with the default linker (embedded MeSH), for
Disease (BC5CDR, NCBI) and Chemical (BC5CDR); found, right and gold are summed over the folds. ``--held-out``
scores BC5CDR dev with a lexicon learned without it (BC5CDR train, NCBI train + dev) and NCBI-disease test with
the shipped sources (none of its documents are in them).
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from medlink.evaluation.corpus import Corpus
from medlink.evaluation.end_to_end import PRF, found_sets, gold_sets
from medlink.linking import Linker
from medlink.linking.annotation.annotator import (
    AnnotatorConfig,
    branches_of,
    with_span_sources,
)
from medlink.linking.annotation.corpus_lexicon import CorpusLexicon
from medlink.linking.annotation.tagger import SpanTagger, TaggedSpan, choose_tagger
from medlink.training.corpus_lexicon import LexiconSource, learn_corpus_lexicon, public_sources

CUTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


class RememberedTagger(SpanTagger):
    """The packaged tagger, its spans remembered per text: every setting reads the same documents."""

    def __init__(self, tagger: SpanTagger) -> None:
        super().__init__(tagger.folder, tagger.threads)
        self.seen: dict[str, list[TaggedSpan]] = {}

    def tag(self, texts: Sequence[str]) -> list[list[TaggedSpan]]:
        new = [text for text in dict.fromkeys(texts) if text not in self.seen]
        if new:
            self.seen.update(zip(new, super().tag(new), strict=True))
        return [self.seen[text] for text in texts]


@dataclass(frozen=True)
class Setting:
    name: str
    tagger: bool
    cut: float | None  # None: no corpus lexicon
    untagged: tuple[str, ...] = ()  # kinds the tagger is not used for (``AnnotatorConfig.untagged_kinds``)


@dataclass
class Tally:
    """Found, right and gold summed over folds, at document and mention level."""

    counts: dict[str, list[int]]

    @classmethod
    def empty(cls) -> Tally:
        return cls({"document": [0, 0, 0], "mention": [0, 0, 0]})

    def add(self, level: str, found: set, gold: set) -> None:
        for i, n in enumerate((len(found), len(found & gold), len(gold))):
            self.counts[level][i] += n

    def prf(self, level: str) -> PRF:
        found, right, gold = self.counts[level]
        precision, recall = right / max(found, 1), right / max(gold, 1)
        f1 = 2 * precision * recall / (precision + recall) if right else 0.0
        return PRF(round(precision, 4), round(recall, 4), round(f1, 4), found, gold, right)


VIEWS = (
    ("BC5CDR Disease", "BC5CDR", "Disease"),
    ("NCBI Disease", "NCBI", "Disease"),
    ("BC5CDR Chemical", "BC5CDR", "Chemical"),
)


def restricted(corpus: Corpus, keep: set[str]) -> Corpus:
    return Corpus(
        corpus.name,
        tuple(m for m in corpus.mentions if m.document_id in keep),
        corpus.notes,
        tuple((i, t) for i, t in corpus.documents if i in keep),
    )


def outer_fold(document_id: str, folds: int) -> int:
    return zlib.crc32(f"outer:{document_id}".encode()) % folds  # independent of the lexicon's inner folds


def score(
    linker: Linker,
    corpus: Corpus,
    entity_type: str,
    tagger: SpanTagger | None,
    lexicon: CorpusLexicon | None,
    setting: Setting,
    tally: Tally,
    unseen: tuple[set[str], Tally] | None = None,
) -> None:
    """Annotate ``corpus`` for ``entity_type`` and add the figures to ``tally`` (and those of the documents in
    ``unseen[0]`` to ``unseen[1]``). A corpus whose mentions are typed so (BC5CDR) is filtered by the type;
    NCBI-disease's are all diseases, typed SpecificDisease, Modifier, …"""
    terminology = linker.terminology
    config = AnnotatorConfig(branches=branches_of(terminology, (), entity_type))
    config = with_span_sources(config, tagger if setting.tagger else None, lexicon, entity_type)
    config = replace(
        config, corpus_lexicon=setting.cut is not None, lexicon_cut=setting.cut or 0.0, untagged_kinds=setting.untagged
    )
    typed = corpus.with_type(entity_type) if any(m.entity_type == entity_type for m in corpus) else corpus
    found = linker.annotate_many([text for _, text in typed.documents], config)
    gold_mentions, gold_concepts = gold_sets(typed, terminology)
    mentions, concepts = found_sets(typed, found)
    tally.add("document", concepts, gold_concepts)
    tally.add("mention", mentions, gold_mentions)
    if unseen is not None:
        keep, part = unseen
        for level, found_set, gold_set in (("document", concepts, gold_concepts), ("mention", mentions, gold_mentions)):
            part.add(level, {f for f in found_set if f[0] in keep}, {g for g in gold_set if g[0] in keep})


def settings(tagger: SpanTagger | None, cuts: Sequence[float] = CUTS) -> list[Setting]:
    taggers = (True, False) if tagger is not None else (False,)
    return [
        Setting(f"tagger {'on' if on else 'off'}, {f'cut {cut}' if cut is not None else 'no corpus lexicon'}", on, cut)
        for on in taggers
        for cut in (None, *cuts)
    ]


def by_corpus(sources: Iterable[LexiconSource]) -> dict[str, Corpus]:
    """The documents of each corpus (BC5CDR, NCBI), train and dev together."""
    grouped: dict[str, list[Corpus]] = {}
    for source in sources:
        grouped.setdefault(source.name.split()[0].split("-")[0], []).append(source.corpus)
    return {
        name: Corpus(
            name, tuple(m for c in parts for m in c.mentions), (), tuple(d for c in parts for d in c.documents)
        )
        for name, parts in grouped.items()
    }


def cross_validate(linker: Linker, tagger: SpanTagger | None, folds: int, data: Path, cuts: Sequence[float]) -> None:
    sources = public_sources(data / "corpora")
    corpora = by_corpus(sources)
    # The fair test of "tagger on": the documents of the files the tagger did not learn from (its card names them)
    unseen_sources = [s for s in sources if tagger is None or not tagger.learned_from(s.corpus.name)]
    unseen = {i for s in unseen_sources for i, _ in s.corpus.documents}
    tallies = {(view, s.name): Tally.empty() for view, _, _ in VIEWS for s in settings(tagger, cuts)}
    fair = {(view, s.name): Tally.empty() for view, _, _ in VIEWS for s in settings(tagger, cuts)}
    for fold in range(folds):
        started = time.perf_counter()
        held = {i for c in corpora.values() for i, _ in c.documents if outer_fold(i, folds) == fold}
        learning = [replace(s, corpus=restricted(s.corpus, {i for i, _ in s.corpus.documents} - held)) for s in sources]
        lexicon = learn_corpus_lexicon(learning, linker.terminology)
        for view, corpus_name, entity_type in VIEWS:
            test = restricted(corpora[corpus_name], held)
            for setting in settings(tagger, cuts):
                key = (view, setting.name)
                score(linker, test, entity_type, tagger, lexicon, setting, tallies[key], (unseen, fair[key]))
        print(f"fold {fold + 1} of {folds}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    print(f"Document-level F1 (mention-level F1), {folds} outer folds, pooled; chosen by the worse of the Disease sets")
    if len(unseen_sources) < len(sources):
        print("(the tagger was trained on some of these documents: its rows flatter it)")
    table(tallies, settings(tagger, cuts))
    if not unseen_sources:
        print("\nThe tagger was trained on every fold's documents: no table of documents it never saw.")
        return
    print(f"\nThe same, on the documents the tagger never saw ({', '.join(s.name for s in unseen_sources)}):")
    table(fair, settings(tagger, cuts))


def table(tallies: dict[tuple[str, str], Tally], chosen: Sequence[Setting]) -> None:
    print("| setting | BC5CDR Disease | NCBI Disease | worse | BC5CDR Chemical |")
    print("|---|---:|---:|---:|---:|")
    rows = []
    for setting in chosen:
        figures = {view: tallies[(view, setting.name)] for view, _, _ in VIEWS}
        worse = min(figures["BC5CDR Disease"].prf("document").f1, figures["NCBI Disease"].prf("document").f1)
        rows.append((worse, setting.name, figures))
    best = max(rows, key=lambda row: row[0])[1]
    for worse, name, figures in rows:
        cells = [f"{figures[v].prf('document').f1:.4f} ({figures[v].prf('mention').f1:.4f})" for v, _, _ in VIEWS]
        shown = f"**{name}**" if name == best else name
        print(f"| {shown} | {cells[0]} | {cells[1]} | {worse:.4f} | {cells[2]} |")


def held_out(linker: Linker, tagger: SpanTagger | None, data: Path) -> None:
    from medlink.evaluation.corpus_formats import load_corpus

    sources = public_sources(data / "corpora")
    without_dev = [s for s in sources if s.name != "BC5CDR dev"]
    bc5cdr_dev = next(s.corpus for s in sources if s.name == "BC5CDR dev")
    ncbi_test = load_corpus(f"pubtator:{data / 'corpora' / 'ncbi-disease' / 'NCBItestset_corpus.txt'}")
    default = AnnotatorConfig()
    cut, untagged = default.lexicon_cut, default.untagged_kinds
    chosen = [
        Setting("before: no corpus lexicon, tagger for every kind", True, None),
        Setting(f"corpus lexicon (cut {cut}), tagger for every kind", True, cut),
        Setting(f"corpus lexicon (cut {cut}), no tagger", False, cut),
    ]
    if untagged:
        chosen.append(Setting(f"corpus lexicon (cut {cut}), tagger not for {', '.join(untagged)}", True, cut, untagged))
    chosen = [
        replace(s, name=f"**default**: {s.name}") if (s.tagger, s.cut, s.untagged) == (True, cut, untagged) else s
        for s in chosen
    ]
    without_bc5cdr_dev = learn_corpus_lexicon(without_dev, linker.terminology)
    shipped_sources = learn_corpus_lexicon(sources, linker.terminology)
    cases = [
        ("BC5CDR dev Disease", bc5cdr_dev, "Disease", without_bc5cdr_dev),
        ("BC5CDR dev Chemical", bc5cdr_dev, "Chemical", without_bc5cdr_dev),
        ("NCBI-disease test", ncbi_test, "Disease", shipped_sources),
    ]
    print("| documents | setting | doc P | doc R | doc F1 | mention F1 |")
    print("|---|---|---:|---:|---:|---:|")
    for name, corpus, entity_type, lexicon in cases:
        assert not lexicon.learned_from_any(i for i, _ in corpus.documents)
        if tagger is not None and tagger.learned_from(corpus.name):
            name += " (the tagger learned from these)"
        for setting in chosen:
            tally = Tally.empty()
            score(linker, corpus, entity_type, tagger, lexicon, setting, tally)
            d, m = tally.prf("document"), tally.prf("mention")
            print(f"| {name} | {setting.name} | {d.precision:.3f} | {d.recall:.3f} | {d.f1:.4f} | {m.f1:.4f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--held-out", action="store_true", help="the defaults on held-out documents")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--cuts", type=float, nargs="+", default=CUTS, help="the lexicon cuts to try")
    parser.add_argument(
        "--tagger",
        default="auto",
        help="auto (the packaged one) or a tagger folder; rows of documents it learned from are marked",
    )
    args = parser.parse_args()
    data = Path(__file__).resolve().parents[2] / "shared" / "data"
    linker = Linker.load()
    chosen = choose_tagger(args.tagger)
    tagger = RememberedTagger(chosen) if chosen is not None else None
    if args.held_out:
        held_out(linker, tagger, data)
    else:
        cross_validate(linker, tagger, args.folds, data, args.cuts)


if __name__ == "__main__":
    main()
