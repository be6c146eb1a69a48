"""``medlink train``: everything medlink trains, one subcommand each — ``encoder`` (the term encoder; ``medlink train
--terminology …`` with no subcommand still trains it), ``set-ranker`` (mentions naming several concepts),
``pair-rescorer`` (the set ranker's second stage), ``candidate-reranker`` (the cross-encoder that reranks close
retrieval decisions) and ``tagger`` (the span tagger ``annotate`` uses). Each subcommand's module is imported only
when it runs."""

from __future__ import annotations

import copy
import importlib

import click

TRAINERS = {
    "encoder": "medlink.cli.train_command:train",
    "set-ranker": "medlink.cli.train_set_ranker_command:train_set_ranker",
    "pair-rescorer": "medlink.cli.train_pair_rescorer_command:train_pair_rescorer",
    "candidate-reranker": "medlink.cli.train_candidate_reranker_command:train_candidate_reranker",
    "tagger": "medlink.cli.train_tagger_command:train_tagger",
}


class _TrainGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(TRAINERS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in TRAINERS:
            return None
        module, _, attribute = TRAINERS[name].partition(":")
        command = copy.copy(getattr(importlib.import_module(module), attribute))
        command.name = name  # its usage line reads "medlink train set-ranker"
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # `medlink train --terminology … -o model/`, as before the trainers were grouped: the encoder
        if args and args[0] not in TRAINERS and args[0] not in self.get_help_option_names(ctx):
            args = ["encoder", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_TrainGroup)
def train() -> None:
    """Train medlink's models: the term encoder and the rankers, rescorer, reranker and tagger around it.

    \b
    Examples:
      medlink train encoder --terminology medic/ --mentions pubtator:NCBItrainset_corpus.txt -o model/
      medlink train set-ranker --terminology icd-bj/ --mentions chip-cdn:CHIP-CDN_train.json -o ranker/
      medlink train candidate-reranker --index medic-index/ --mentions pubtator:train.txt -o reranker/
    """
