"""``medlink mcsm``: how well an encoder groups concepts of the same semantic type (CODER §4.5)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from medlink.cli.paths import terminology_option
from medlink.encoders.registry import BACKENDS, DEFAULT_MODEL
from medlink.evaluation.mcsm import MCSM_NEIGHBOURS


@click.command()
@terminology_option("Compiled terminology with semantic types (default: the embedded MeSH descriptors).")
@click.option(
    "--encoder",
    "encoder_name",
    default=DEFAULT_MODEL,
    show_default=True,
    help="medlink, medlink-fast, minilm, a folder.",
)
@click.option("--backend", type=click.Choice(BACKENDS), default=BACKENDS[0], show_default=True)
@click.option("-k", "k", type=int, default=MCSM_NEIGHBOURS, show_default=True, help="Neighbourhood size.")
@click.option("--sample", type=int, default=None, help="Score a fixed random sample of this many typed concepts.")
@click.option("--json", "as_json", is_flag=True)
def mcsm(
    terminology_dir: Path | None, encoder_name: str, backend: str, k: int, sample: int | None, as_json: bool
) -> None:
    """MCSM per semantic type (types with at least 50 concepts)."""
    from medlink.encoders import load_encoder
    from medlink.evaluation.mcsm import ideal_mcsm
    from medlink.evaluation.mcsm import mcsm as score
    from medlink.terminology import load_default_terminology, load_terminology

    terminology = load_terminology(terminology_dir) if terminology_dir else load_default_terminology()
    scores = score(terminology, load_encoder(encoder_name, backend=backend), k=k, sample=sample)
    if as_json:
        click.echo(json.dumps({"k": k, "ideal": ideal_mcsm(k), "encoder": encoder_name, "scores": scores}))
        return
    click.echo(f"MCSM, k = {k} (best possible {ideal_mcsm(k):.2f}), encoder {encoder_name}:")
    for semantic_type, value in sorted(scores.items(), key=lambda item: -item[1]):
        click.echo(f"  {value:6.2f}  {semantic_type}")
