"""``medlink models``: the models medlink knows, where each comes from and whether it is installed, and
``medlink models verify``: their files against the checksums recorded when they were made."""

from __future__ import annotations

import json
import sys

import click

from medlink.models.catalog import (
    ModelEntry,
    distribution_version,
    model_entries,
    model_entry,
    model_files,
    model_location,
)
from medlink.models.checksums import FAILED, verify_model


class _ListByDefault(click.Group):
    """``medlink models`` alone lists; ``medlink models verify`` checks."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0].startswith("-") and args[0] not in ("-h", "--help")):
            args = ["list", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_ListByDefault)
def models() -> None:
    """The models medlink knows: what each is for, which distribution brings it, its version, size and licence,
    and whether it is installed (``medlink models`` lists them; ``medlink models verify`` checks their files)."""


@models.command("list")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_models(output_format: str) -> None:
    """List the models (the default subcommand)."""
    rows = [_row(entry) for entry in model_entries()]
    if output_format == "json":
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
        return
    headers = ("name", "installed", "version", "size", "distribution", "install", "licence", "purpose")
    table = [headers] + [
        (
            row["name"],
            "yes" if row["installed"] else "no",
            row["version"] or "-",
            _size(row["bytes"]),
            row["distribution"],
            row["install"],
            row["licence"],
            row["purpose"],
        )
        for row in rows
    ]
    widths = [max(len(line[column]) for line in table) for column in range(len(headers) - 1)]
    for line in table:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)) + "  " + line[-1])


@models.command("verify")
@click.argument("names", nargs=-1)
def verify(names: tuple[str, ...]) -> None:
    """Check the files of the installed models (or of NAMES) against their recorded checksums; exit 1 when any
    file is missing or differs."""
    entries = [model_entry(name) for name in names] or model_entries()
    failed = False
    for entry in entries:
        verdict = verify_model(entry)
        counted = f" ({verdict.files} files)" if verdict.files else ""
        click.echo(f"{entry.name}: {verdict.status}{counted}")
        for problem in verdict.problems:
            click.echo(f"  {problem}")
        failed |= verdict.status == FAILED
    if failed:
        sys.exit(1)


def _row(entry: ModelEntry) -> dict:
    files = list(model_files(entry))
    location = model_location(entry)
    return {
        "name": entry.name,
        "purpose": entry.purpose,
        "distribution": entry.distribution,
        "version": distribution_version(entry.distribution),
        "installed": bool(files),
        "bytes": sum(path.stat().st_size for path in files),
        "licence": entry.licence,
        "install": entry.install,
        "location": str(location) if location is not None else None,
    }


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count else "-"
