"""``medlink annotate``: find and link every concept mention of running text."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from medlink.cli.dataclass_options import dataclass_options
from medlink.cli.linker_options import LinkerChoice, annotator_config, linker_options, make_linker
from medlink.cli.paths import PathOption
from medlink.cli.span_options import span_config, span_options
from medlink.linking.annotation.annotator import AnnotatorConfig


@click.command()
@click.argument("texts", nargs=-1)
@linker_options
@click.option(
    "--input",
    "inputs",
    multiple=True,
    metavar="[FORMAT:]PATH",
    help='Documents: .txt (one document), .jsonl ({"id", "text"}), pubtator:PATH, bioc:PATH (.xml). Repeatable.',
)
@click.option(
    "--output",
    "output_path",
    type=PathOption(path_type=Path),
    default=None,
    help="Where to write (default: standard output); a folder for --format brat.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["jsonl", "pubtator", "bioc", "brat"]),
    default="jsonl",
    show_default=True,
)
@click.option(
    "--entity-type",
    default=None,
    metavar="TYPE",
    help="Annotate only concepts of this kind (Disease, Chemical, …: its MeSH branches); --branches says "
    "it exactly. Also the type written in PubTator, BioC and brat.",
)
@click.option(
    "--train",
    "train_spec",
    default=None,
    metavar="FORMAT:PATH",
    help="Annotated training documents (pubtator:…) to learn from: their mention texts become spans, and "
    "names they seldom mark stop being spans.",
)
@dataclass_options(AnnotatorConfig)
@span_options
def annotate(
    texts: tuple[str, ...],
    linker_choice: LinkerChoice,
    inputs: tuple[str, ...],
    output_path: Path | None,
    output_format: str,
    entity_type: str | None,
    train_spec: str | None,
    tagger: str,
    approximate: float | None,
    **annotator_settings: Any,
) -> None:
    """Find and link every concept mention of TEXTS (or the documents of --input), each with its offsets,
    concepts, score, stage, whether it is negated or uncertain, and why.

    \b
    Examples:
      medlink annotate "No evidence of myocardial infarction; possible pneumonia."
      medlink annotate --input notes.jsonl --entity-type Disease --output notes.annotated.jsonl
      medlink annotate --input pubtator:CDR_DevelopmentSet.PubTator.txt --format pubtator --index medic-index/ \\
          --entity-type Disease --train pubtator:CDR_TrainingSet.PubTator.txt
    """
    from medlink.cli.document_files import Document, read_documents, write_annotations
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.evaluation.end_to_end import learn_from_corpus
    from medlink.linking.annotation.annotator import branches_of
    from medlink.serve.text_checks import NOT_TEXT, is_text

    if not texts and not inputs:
        raise click.UsageError("give texts as arguments or documents with --input")
    if output_format == "brat" and output_path is None:
        raise click.UsageError("--format brat writes a folder of .txt and .ann files: give --output FOLDER")
    documents = [Document(str(number), text) for number, text in enumerate(texts, start=1)]
    if unreadable := [document.id for document in documents if not is_text(document.text)]:
        raise click.UsageError(f"text {unreadable[0]} {NOT_TEXT} (bytes that are not UTF-8?)")
    for spec in inputs:
        documents += list(read_documents(spec))
    annotation = annotator_config(linker_choice, annotator_settings)  # a bad [annotator] table: before any work
    linker = make_linker(linker_choice, progress=sys.stderr.isatty())
    branches = branches_of(linker.terminology, linker.config.branches, entity_type)
    config = span_config(
        replace(annotation, branches=branches),
        linker.terminology,
        tagger,
        approximate,
        entity_type,
        trained=train_spec is not None,
    )
    if train_spec:
        train = load_corpus(train_spec, entity_type, None)
        config = replace(config, lexicon=learn_from_corpus(train, linker.terminology, config))
    if config.corpus_lexicon and config.corpus is not None:
        seen = sum(document.id in config.corpus.documents for document in documents)
        if seen:
            click.echo(
                f"note: {seen:,} of these documents are among those the corpus lexicon was learned from, so "
                "annotations of them are no held-out measure (--no-corpus-lexicon leaves it off)",
                err=True,
            )
    found = linker.annotate_many([document.text for document in documents], config)
    if output_format == "brat":
        write_annotations(documents, found, "brat", None, output_path, entity_type)
        click.echo(f"{len(documents):,} documents annotated into {output_path}", err=True)
        return
    if output_path is None:
        write_annotations(documents, found, output_format, sys.stdout, entity_type=entity_type)
        return
    partial = output_path.with_name(f".{output_path.name}.partial")
    with partial.open("w", encoding="utf-8") as stream:
        write_annotations(documents, found, output_format, stream, entity_type=entity_type)
    partial.replace(output_path)
    click.echo(f"{len(documents):,} documents, {sum(map(len, found)):,} mentions written to {output_path}", err=True)
