"""``medlink eval``: score the linker on an annotated corpus with the strict scorer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from medlink.cli.linker_options import LinkerChoice, annotator_config, linker_options, make_linker
from medlink.cli.paths import PathOption
from medlink.cli.span_options import span_config, span_options
from medlink.evaluation.setups import SUBSETS

if TYPE_CHECKING:
    from medlink.evaluation.corpus import Corpus


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
    tagger: str,
    approximate: float | None,
) -> None:
    """Link every mention of a corpus and report strict Acc@k, MRR and nil precision/recall (or, with
    --end-to-end, annotate its documents and score what was found)."""
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.evaluation.runner import evaluate, write_errors

    corpus = load_corpus(corpus_spec, entity_type, namespace)
    train = load_corpus(train_spec, entity_type, namespace) if train_spec else None
    if end_to_end:
        _end_to_end(corpus, train, linker_choice, entity_type, as_json, tagger, approximate)
        return
    subset = "refined" if refined else subset
    if subset != "all" and train is None:
        raise click.UsageError(f"--subset {subset} needs --train FORMAT:PATH")
    linker = make_linker(linker_choice, progress=False, training=train)
    evaluation = evaluate(linker, corpus, ks, "lenient" if lenient else "strict", train, subset)
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
    click.echo(f"{evaluation.corpus}: {result['n']} mentions ({result['mode']})")
    for k in sorted(evaluation.scores.accuracy):
        click.echo(f"  Acc@{k:<3} {evaluation.scores.accuracy[k]:.4f}")
    click.echo(f"  MRR     {evaluation.scores.mrr:.4f}")
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
) -> None:
    import time
    from dataclasses import replace

    from medlink.evaluation.end_to_end import learn_from_corpus, score_annotations
    from medlink.linking.annotation.annotator import branches_of

    if not corpus.documents:
        raise click.UsageError(f"{corpus.name}: --end-to-end needs the corpus's documents (pubtator:PATH has them)")
    annotation = annotator_config(choice, {})  # the --config file's [annotator] table, checked before any work
    linker = make_linker(choice, progress=False, training=train)
    config = replace(annotation, branches=branches_of(linker.terminology, linker.config.branches, entity_type))
    config = span_config(config, linker.terminology, tagger, approximate, entity_type, trained=train is not None)
    if train is not None:
        config = replace(config, lexicon=learn_from_corpus(train, linker.terminology, config))
    started = time.perf_counter()
    found = linker.annotate_many([text for _, text in corpus.documents], config)
    seconds = time.perf_counter() - started
    result = {
        "corpus": corpus.name,
        **score_annotations(corpus, found, linker.terminology).to_dict(),
        "documents_per_second": round(len(corpus.documents) / max(seconds, 1e-9), 1),
        "train": train.name if train else None,
        "tagger": str(config.tagger.folder) if config.tagger else None,
    }
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(
        f"{corpus.name}: {result['documents']} documents, end to end"
        f"{f' (taught by {train.name})' if train else ''}, {result['documents_per_second']} documents/s"
    )
    for level in ("mention", "document"):
        r = result[level]
        click.echo(
            f"  {level:9} precision {r['precision']:.4f}  recall {r['recall']:.4f}  F1 {r['f1']:.4f}  "
            f"({r['right']:,} right of {r['found']:,} found, {r['gold']:,} gold)"
        )
