"""``medlink link``: link mentions given as arguments or streamed from a file."""

from __future__ import annotations

import os
import sys
from itertools import islice
from pathlib import Path

import click

from medlink.cli.linker_options import LinkerChoice, linker_options, make_linker
from medlink.cli.paths import PathOption

_BATCH = 4096


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
@click.option("--progress/--no-progress", default=None, help="Progress bar on standard error (default: if a terminal).")
def link(
    texts: tuple[str, ...],
    linker_choice: LinkerChoice,
    input_path: Path | None,
    output_path: Path | None,
    output_format: str | None,
    progress: bool | None,
) -> None:
    """Link TEXTS (or the mentions in --input) to concepts.

    \b
    Examples:
      medlink link "heart attack" "Crohn's disease"
      medlink link --format json "myocardial infarction"
      medlink link --input mentions.tsv --output results.jsonl
      medlink link --index my-index/ --sieves exact,O-T "heart atack"

    The embedded default runs exact match, then dense retrieval with the packaged MiniLM over the MeSH
    descriptors; the first run builds that index (about a minute and a half) and caches it.
    """
    from medlink.linking import Mention
    from medlink.linking.mention_files import ResultWriter, read_mentions

    if not texts and input_path is None:
        raise click.UsageError("give mentions as arguments or with --input FILE")
    linker = make_linker(linker_choice)
    mentions = iter([Mention(text) for text in texts]) if texts else read_mentions(input_path)  # type: ignore[arg-type]
    as_json = output_format == "json" or (
        output_format is None and output_path is not None and output_path.suffix.lower() in (".jsonl", ".json")
    )
    # Results go to a temporary file renamed at the end, so a failed run never leaves a truncated output behind.
    partial = output_path.with_name(f".{output_path.name}.partial") if output_path else None
    try:
        stream = open(partial, "w", encoding="utf-8") if partial else sys.stdout  # noqa: SIM115
    except OSError as error:
        raise click.ClickException(f"{output_path}: cannot write the results there ({error.strerror})") from None
    try:
        writer = ResultWriter(stream, as_json)
        show = progress if progress is not None else (input_path is not None and sys.stderr.isatty())
        from tqdm import tqdm

        with tqdm(desc="linking", unit=" mentions", disable=not show, file=sys.stderr) as bar:
            while batch := list(islice(mentions, _BATCH)):
                for result in linker.link_many(batch):
                    writer.write(result)
                bar.update(len(batch))
    except BaseException:
        if partial:
            stream.close()
            partial.unlink(missing_ok=True)
        raise
    if partial and output_path:
        stream.close()
        os.replace(partial, output_path)
