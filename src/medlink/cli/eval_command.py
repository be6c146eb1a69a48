"""``medlink eval``: score the linker on an annotated corpus with the strict scorer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from medlink.cli.linker_options import LinkerChoice, annotator_config, linker_options, make_linker
from medlink.cli.paths import PathOption
from medlink.cli.span_options import span_config, span_options
from medlink.evaluation.setups import SUBSETS

if TYPE_CHECKING:
    from medlink.evaluation.corpus import Corpus
    from medlink.evaluation.crosswalk import Crosswalk
    from medlink.evaluation.runner import Evaluation


@click.command(name="eval")
@click.option("--corpus", "corpus_spec", required=True, help="FORMAT:PATH, e.g. pubtator:NCBItestset_corpus.txt")
@linker_options
@click.option("--entity-type", default=None, help="Only mentions of this type (e.g. Disease, Chemical).")
@click.option("--namespace", default=None, help="Namespace for bare gold ids (default: the format's own).")
@click.option(
    "--train",
    "train_spec",
    default=None,
    help="Training corpus FORMAT:PATH: its mentions join the search (exact and D/OD sieves) and define --subset.",
)
@click.option(
    "--subset",
    type=click.Choice(SUBSETS),
    default="all",
    show_default=True,
    help="Score all mentions; the refined set (drop mentions seen in --train, then duplicates); or those whose "
    "gold concepts are unseen (zero-shot) / all seen (stratified) in --train.",
)
@click.option("--refined", is_flag=True, help="Same as --subset refined.")
@click.option("--lenient", is_flag=True, help="SapBERT's any-overlap rule instead of the strict one.")
@click.option("-k", "ks", multiple=True, type=int, default=(1, 5), show_default=True, help="Report Acc@k.")
@click.option(
    "--errors",
    "errors_path",
    type=PathOption(path_type=Path, dir_okay=False),
    help="Write the mentions wrong at rank 1 to this TSV.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option(
    "--end-to-end",
    is_flag=True,
    help="Find the mentions too (medlink annotate) in every document of a PubTator corpus and report "
    "mention-level (span + id) and document-level precision, recall and F1; --train documents teach "
    "the annotator.",
)
@click.option(
    "--crosswalk",
    "crosswalk_spec",
    default="shipped",
    show_default=True,
    metavar="shipped|none|FILE.tsv",
    help="Also score across terminology releases: gold ids a crosswalk moves (BC5CDR's 2015 supplementary records "
    "now MeSH 2024 descriptors) are scored as their new ids, reported apart from the strict figures.",
)
@click.option(
    "--corpus-lexicon/--no-corpus-lexicon",
    default=None,
    help="With --end-to-end: use what public annotated corpora teach (the default, as annotate does); it is left "
    "off by itself for a corpus it was learned from.",
)
@span_options
def eval_command(
    corpus_spec: str,
    linker_choice: LinkerChoice,
    entity_type: str | None,
    namespace: str | None,
    train_spec: str | None,
    subset: str,
    refined: bool,
    lenient: bool,
    ks: tuple[int, ...],
    errors_path: Path | None,
    as_json: bool,
    end_to_end: bool,
    crosswalk_spec: str,
    corpus_lexicon: bool | None,
    tagger: str,
    approximate: float | None,
) -> None:
    """Link every mention of a corpus and report strict Acc@k, MRR and nil precision/recall (or, with
    --end-to-end, annotate its documents and score what was found)."""
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.evaluation.runner import evaluate, write_errors

    crosswalk = _crosswalk(crosswalk_spec)
    corpus = load_corpus(corpus_spec, entity_type, namespace)
    train = load_corpus(train_spec, entity_type, namespace) if train_spec else None
    if end_to_end:
        given = {} if corpus_lexicon is None else {"corpus_lexicon": corpus_lexicon}
        _end_to_end(corpus, train, linker_choice, entity_type, as_json, tagger, approximate, given, crosswalk)
        return
    subset = "refined" if refined else subset
    if subset != "all" and train is None:
        raise click.UsageError(f"--subset {subset} needs --train FORMAT:PATH")
    linker = make_linker(linker_choice, progress=False, training=train)
    evaluation = evaluate(linker, corpus, ks, "lenient" if lenient else "strict", train, subset, crosswalk)
    result = evaluation.as_dict()
    choice = linker_choice
    setup = cast(dict, result["setup"])
    setup.update(
        entity_type=entity_type,
        terminology=", ".join(source.path for source in linker.terminology.sources) or "in memory",
        index=str(choice.index_dir)
        if choice.index_dir
        else ("none" if choice.exact_only or choice.ranker_dir else "embedded"),
        sieves=",".join(s.name for s in linker.sieves),
        abbreviations=linker.config.expand_abbreviations,
        composites=linker.config.split_composites,
        **({"ranker": str(choice.ranker_dir)} if choice.ranker_dir else {}),
    )
    if errors_path:
        result["errors_written"] = write_errors(evaluation, errors_path)
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False))
        return
    _print_linking(evaluation, corpus)


def _print_linking(evaluation: Evaluation, corpus: Corpus) -> None:
    """``medlink eval``'s table of a linking evaluation."""
    click.echo(f"{evaluation.corpus}: {evaluation.scores.n} mentions ({evaluation.scores.mode})")
    for k in sorted(evaluation.scores.accuracy):
        click.echo(f"  Acc@{k:<3} {evaluation.scores.accuracy[k]:.4f}")
    click.echo(f"  MRR     {evaluation.scores.mrr:.4f}")
    across = evaluation.across_releases
    if across is not None:
        moved = cast(dict, evaluation.setup["crosswalk"])
        click.echo(
            f"  across releases ({moved['name']}: gold ids of {moved['mentions_moved']:,} mentions moved): "
            + ", ".join(f"Acc@{k} {across.accuracy[k]:.4f}" for k in sorted(across.accuracy))
        )
    nil = evaluation.scores.nil
    click.echo(
        f"  nil     gold {nil.gold_nil}, predicted {nil.predicted_nil}, "
        f"precision {nil.precision:.3f}, recall {nil.recall:.3f}"
    )
    sets = evaluation.scores.sets
    click.echo(
        f"  sets    precision {sets.precision:.4f}, recall {sets.recall:.4f}, F1 {sets.f1:.4f} "
        f"(CBLUE's metric: each mention's predicted concepts against all its gold ones)"
    )
    implication = evaluation.scores.implication
    if implication.several.gold:
        click.echo(
            f"  sets    F1 {implication.single.f1:.4f} on single-concept mentions, "
            f"{implication.several.f1:.4f} on several-concept ones; number of concepts right for "
            f"{implication.count_accuracy:.4f}; Acc@1 on single-concept mentions "
            f"{implication.single_accuracy:.4f}"
        )
    for note in corpus.notes:
        click.echo(f"  note: {note}")


def _end_to_end(
    corpus: Corpus,
    train: Corpus | None,
    choice: LinkerChoice,
    entity_type: str | None,
    as_json: bool,
    tagger: str,
    approximate: float | None,
    given: dict[str, Any],
    crosswalk: Crosswalk | None,
) -> None:
    import time
    from dataclasses import replace

    from medlink.evaluation.end_to_end import learn_from_corpus, score_annotations
    from medlink.linking.annotation.annotator import branches_of

    if not corpus.documents:
        raise click.UsageError(f"{corpus.name}: --end-to-end needs the corpus's documents (pubtator:PATH has them)")
    annotation = annotator_config(choice, given)  # the --config file's [annotator] table, checked before any work
    linker = make_linker(choice, progress=False, training=train)
    config = replace(annotation, branches=branches_of(linker.terminology, linker.config.branches, entity_type))
    config = span_config(config, linker.terminology, tagger, approximate, entity_type, trained=train is not None)
    if train is not None:
        config = replace(config, lexicon=learn_from_corpus(train, linker.terminology, config))
    notes = []
    if config.corpus_lexicon and config.corpus and config.corpus.learned_from_any(i for i, _ in corpus.documents):
        config = replace(config, corpus_lexicon=False)
        notes.append("the corpus lexicon was learned from documents of this corpus, so it was left off")
    if config.tagger is not None and config.tagger.learned_from(corpus.name):
        if config.tagger.packaged:
            config = replace(config, tagger=None)
            notes.append("the packaged span tagger was trained on this corpus, so it was left off")
        else:  # the user's own choice: scored, but not silently
            notes.append("the span tagger was trained on this corpus: these figures flatter it")
    started = time.perf_counter()
    found = linker.annotate_many([text for _, text in corpus.documents], config)
    seconds = time.perf_counter() - started
    result = {
        "corpus": corpus.name,
        **score_annotations(corpus, found, linker.terminology).to_dict(),
        "documents_per_second": round(len(corpus.documents) / max(seconds, 1e-9), 1),
        "train": train.name if train else None,
        "tagger": str(config.tagger.folder) if config.tagger else None,
        "corpus_lexicon": config.corpus_lexicon and config.corpus is not None,
        "notes": notes,
    }
    moved = crosswalk.moved_in(corpus) if crosswalk is not None else 0
    if crosswalk is not None and moved:
        across = score_annotations(corpus, found, linker.terminology, crosswalk).to_dict()
        result["across_releases"] = {
            "crosswalk": crosswalk.name,
            "mentions_moved": moved,
            "mention": across["mention"],
            "document": across["document"],
        }
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(
        f"{corpus.name}: {result['documents']} documents, end to end"
        f"{f' (taught by {train.name})' if train else ''}"
        f"{', with the corpus lexicon' if result['corpus_lexicon'] else ''}, "
        f"{result['documents_per_second']} documents/s"
    )
    for level in ("mention", "document"):
        r = result[level]
        click.echo(
            f"  {level:9} precision {r['precision']:.4f}  recall {r['recall']:.4f}  F1 {r['f1']:.4f}  "
            f"({r['right']:,} right of {r['found']:,} found, {r['gold']:,} gold)"
        )
    if "across_releases" in result:
        for level in ("mention", "document"):
            r = result["across_releases"][level]
            click.echo(f"  {level:9} across releases (gold ids of {moved:,} mentions moved): F1 {r['f1']:.4f}")
    for note in notes:
        click.echo(f"  note: {note}")


def _crosswalk(spec: str) -> Crosswalk | None:
    from medlink.errors import MedlinkError
    from medlink.evaluation.crosswalk import open_crosswalk

    try:
        return open_crosswalk(spec)
    except MedlinkError as error:
        raise click.BadParameter(str(error), param_hint="--crosswalk") from None
