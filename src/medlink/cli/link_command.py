"""``medlink link``: link mentions given as arguments or streamed from a file."""

from __future__ import annotations

import os
import sys
from itertools import islice
from pathlib import Path

import click

from medlink.cli.linker_options import LinkerChoice, linker_options, make_linker
from medlink.cli.paths import PathOption


@click.command()
@click.argument("texts", nargs=-1)
@linker_options
@click.option(
    "--input",
    "input_path",
    type=PathOption(path_type=Path, dir_okay=False),
    help="Mentions file: .jsonl (mention, document…), .tsv (first column) or one mention per line.",
)
@click.option(
    "--output",
    "output_path",
    type=PathOption(path_type=Path, dir_okay=False),
    help="Results file: .jsonl for JSON lines, anything else for TSV (default: standard output).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["tsv", "json"]),
    default=None,
    help="Output format on standard output or when --output has no telling extension.",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue an interrupted --input/--output run: keep the results it wrote, link the rest.",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar on standard error (default: if a terminal).")
@click.option("--entity-type", default=None, hidden=True, help="The old name of --branches KIND.")
def link(
    texts: tuple[str, ...],
    linker_choice: LinkerChoice,
    input_path: Path | None,
    output_path: Path | None,
    output_format: str | None,
    resume: bool,
    progress: bool | None,
    entity_type: str | None,
) -> None:
    """Link TEXTS (or the mentions in --input) to concepts.

    \b
    Examples:
      medlink link "heart attack" "Crohn's disease"
      medlink link --format json "myocardial infarction"
      medlink link --input mentions.tsv --output results.jsonl
      medlink link --input mentions.tsv --output results.jsonl --resume   # after an interruption
      medlink link --index my-index/ --sieves exact,O-T "heart atack"
      medlink link --branches Disease "SRC"           # only MeSH diseases compete (branches C, F03)

    The embedded default links to all of MeSH: exact match over descriptors and supplementary records (a
    descriptor first where both share the name), then dense retrieval with the packaged MiniLM over the
    descriptors; that index ships prebuilt (`terminology update` builds its own; where one must still be built,
    exact hits are answered first). --embedded descriptors links
    to the descriptors alone.
    """
    from medlink.cli.mention_files import ResultWriter, read_mentions, rows_written
    from medlink.linking import Mention
    from medlink.linking.mentions.branches import branches_for

    if not texts and input_path is None:
        raise click.UsageError("give mentions as arguments or with --input FILE")
    if resume and (input_path is None or output_path is None):
        raise click.UsageError("--resume continues a run with --input and --output: give both")
    as_json = output_format == "json" or (
        output_format is None and output_path is not None and output_path.suffix.lower() in (".jsonl", ".json")
    )
    # Results go to a temporary file renamed at the end, so a failed run never leaves a truncated output behind;
    # a resumed run appends to the one an interrupted run left, after the results it holds.
    partial = output_path.with_name(f".{output_path.name}.partial") if output_path else None
    done, has_header = rows_written(partial, as_json) if resume and partial else (0, False)
    if resume and output_path and output_path.exists() and not partial.exists():  # type: ignore[union-attr]
        click.echo(f"{output_path} is complete: nothing to resume", err=True)
        return
    linker = make_linker(linker_choice, branches=branches_for(entity_type) if entity_type else ())
    mentions = iter([Mention(text) for text in texts]) if texts else read_mentions(input_path)  # type: ignore[arg-type]
    mentions = islice(mentions, done, None)
    try:
        stream = open(partial, "a" if resume else "w", encoding="utf-8") if partial else sys.stdout  # noqa: SIM115
    except OSError as error:
        raise click.ClickException(f"{output_path}: cannot write the results there ({error.strerror})") from None
    if done:
        click.echo(f"resuming after {done:,} results already in {partial}", err=True)
    try:
        writer = ResultWriter(stream, as_json, header=not has_header)
        show = progress if progress is not None else (input_path is not None and sys.stderr.isatty())
        from tqdm import tqdm

        with tqdm(desc="linking", unit=" mentions", disable=not show, file=sys.stderr) as bar:
            while batch := list(islice(mentions, max(1, linker.config.batch_size))):
                for result in linker.link_many(batch):
                    writer.write(result)
                stream.flush()  # a killed run keeps every finished batch for --resume
                bar.update(len(batch))
    except BaseException as error:
        if partial:
            stream.close()
            if isinstance(error, KeyboardInterrupt):  # interrupted, not wrong: keep what is done for --resume
                click.echo(f"interrupted: run the same command with --resume to continue from {partial}", err=True)
            else:
                partial.unlink(missing_ok=True)
        raise
    if partial and output_path:
        stream.close()
        os.replace(partial, output_path)
