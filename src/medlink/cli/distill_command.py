"""``medlink distill``: cut a term encoder down to fewer layers and train the cut model on the full one's vectors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from medlink.cli.dataclass_options import with_settings
from medlink.cli.paths import PathOption, terminology_option
from medlink.encoders.registry import DEFAULT_MODEL
from medlink.training.distill_config import DistillConfig


def _layers(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[int, ...]:
    try:
        layers = tuple(int(part) for part in value.split(","))
    except ValueError:
        layers = ()
    if not layers or layers[0] < 0 or list(layers) != sorted(set(layers)):
        raise click.BadParameter(f"increasing comma-separated layer indexes, e.g. 0,3,5 (got {value!r})")
    return layers


@click.command()
@click.option(
    "--teacher", default=DEFAULT_MODEL, show_default=True, help="Encoder to learn from: medlink, minilm or a folder."
)
@click.option(
    "--layers",
    default=",".join(map(str, DistillConfig.layers)),
    show_default=True,
    callback=_layers,
    help="Teacher layers the student keeps (0-based, increasing); fewer layers encode faster.",
)
@terminology_option("Compiled terminology whose names are the training texts (default: the embedded MeSH descriptors).")
@click.option("--mentions", "mentions_specs", multiple=True, help="Annotated mentions FORMAT:PATH to add (repeatable).")
@with_settings(DistillConfig, "config")
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path), required=True)
def distill(
    teacher: str,
    layers: tuple[int, ...],
    terminology_dir: Path | None,
    mentions_specs: tuple[str, ...],
    config: DistillConfig,
    output_dir: Path,
) -> None:
    """Distil an encoder into a shallower, faster one; run the same command again to resume.

    The result is a model folder like `medlink train`'s: `medlink index build --encoder OUTPUT` uses it.
    """
    from medlink.encoders.registry import load_encoder, resolve_model
    from medlink.terminology import load_default_terminology, load_terminology
    from medlink.training.distill import distill as run_distillation
    from medlink.training.examples import training_examples
    from medlink.training.runtime import resolve_device

    terminology = load_terminology(terminology_dir) if terminology_dir else load_default_terminology()
    mentions: list[tuple[str, str]] = []
    if mentions_specs:
        from medlink.evaluation.corpus_formats import load_corpus

        for spec in mentions_specs:
            mentions += [(text, ids[0]) for text, ids in load_corpus(spec).labelled_pairs()]
    config = replace(config, layers=layers)
    examples = training_examples(terminology, mentions, seed=config.seed)
    click.echo(f"{len(examples):,} texts of {len(examples.concepts):,} concepts", err=True)
    try:
        run_on = resolve_device(config.device)
        # On a GPU the teacher runs there too, through torch (the ONNX backend is CPU-only).
        length = config.max_length
        teacher_encoder = (
            load_encoder(teacher, backend="torch", max_length=length, device=str(run_on))
            if run_on.type != "cpu"
            else load_encoder(teacher, max_length=length)
        )
        result = run_distillation(teacher_encoder, resolve_model(teacher), examples, output_dir, config)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    resumed = f" (resumed at step {result.resumed_from})" if result.resumed_from else ""
    click.echo(
        f"distilled {result.layers} layers in {result.steps} steps, {result.seconds:.0f} s{resumed}, "
        f"last loss {result.last_loss:.4f}; model in {output_dir}"
    )
