"""What a matcher is made of, as a small picklable description shared by the command line and the service."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.linking.mentions.scanner import ConceptScanner
from medlink.options import setting
from medlink.trials.matching.encoders import load_trial_encoders
from medlink.trials.matching.index_build import index_texts
from medlink.trials.matching.matcher import TrialMatcher
from medlink.trials.matching.note_readings import READINGS, WHOLE, NoteReading
from medlink.trials.matching.scoring import FUSIONS, FusionWeights
from medlink.trials.matching.trial_index import TrialIndex, TrialIndexError


@dataclass(frozen=True)
class MatcherSpec:
    """index_dir: a trial index (``medlink trials index``); without one, :meth:`build` needs trial texts.
    encoders: the trial encoders (default: the index's own, else the shipped ones).
    reranker: ``msmarco``, an ONNX cross-encoder folder, or ``None``.
    concepts: whether the note's diseases are found and compared with the trials' (MeSH, embedded).
    expand_query: whether every name of those diseases joins the note's BM25 query.
    fusion, reading, rerank_tokens: how the signals are combined, how the reranker reads a long note, and the
    window it reads note and trial in.
    """

    index_dir: Path | None = None
    encoders: str | None = setting(
        None,
        "Trial encoders: a folder from `medlink trials train`, or a term encoder "
        "name for both sides (default: the index's own, else the shipped ones).",
    )
    reranker: str | None = setting(
        None,
        "Cross-encoder over the top trials: 'msmarco' (pip install "
        "'medlink[rerank]') or an ONNX cross-encoder folder (default: none).",
        flag="--reranker",
        old_flag="--rerank",  # its name for one more release; --rerank is the linker's on/off switch
    )
    weights: FusionWeights = field(default_factory=FusionWeights)
    concepts: bool = setting(True, "Compare the diseases of the note and the trials.")
    rerank_top: int = setting(TrialMatcher.rerank_top, "How many top trials the reranker reads.", minimum=1)
    expand_query: bool = setting(
        TrialMatcher.expand_query,
        "Add the names of the note's diseases to its BM25 query.",
        flag="--expand/--no-expand",
    )
    fusion: str = setting(
        TrialMatcher.fusion,
        "How the first-stage signals are combined: 'weighted' (z-scores, --weights) or 'rrf' (reciprocal-rank fusion).",
        choices=FUSIONS,
    )
    reading: str = setting(
        WHOLE,
        "How the reranker reads a long note: 'whole', 'findings' (its first sentence "
        "and the sentences naming a disease) or 'windows' (best window).",
        choices=READINGS,
    )
    rerank_tokens: int = setting(256, "The reranker's window in tokens, note and trial together.", minimum=16)

    def build(self, trial_texts: Mapping[str, str] | None = None, progress: bool = False) -> TrialMatcher:
        from medlink.terminology import load_default_terminology
        from medlink.trials.matching.trial_reranker import load_reranker

        scanner = ConceptScanner(load_default_terminology()) if self.concepts else None
        if self.index_dir is not None:
            index = TrialIndex.load(self.index_dir)
            encoders = load_trial_encoders(self.encoders or _encoders_named(Path(self.index_dir), index))
            built_with = index.manifest.get("concept_terminology")
            if scanner and built_with and built_with != scanner.terminology.fingerprint():
                raise TrialIndexError(
                    f"{self.index_dir} was built with another disease terminology than this "
                    f"medlink's embedded MeSH; rebuild it with `medlink trials index`"
                )
        elif trial_texts:
            encoders = load_trial_encoders(self.encoders)
            index = index_texts(trial_texts, encoders, scanner, progress)
        else:
            raise MedlinkError(
                "no trials to match against: give a trial index (--index) or a collection with trial texts (--birco)"
            )
        reranker = load_reranker(self.reranker, self.rerank_tokens) if self.reranker else None
        return TrialMatcher(
            index,
            encoders,
            scanner,
            self.weights,
            reranker,
            self.rerank_top,
            expand_query=self.expand_query,
            fusion=self.fusion,
            reading=NoteReading(self.reading),
            made_by=self.build if self.index_dir is not None else None,  # what a copy in another process reloads
        )


def _encoders_named(folder: Path, index: TrialIndex) -> str | None:
    """The encoders a trial index was built with, as its manifest names them (checked before they are opened: see
    :mod:`medlink.encoders.named`); their fingerprints are checked when the index is searched."""
    from medlink.encoders.named import model_named_in
    from medlink.trials.matching.encoders import BASELINE, SHIPPED
    from medlink.trials.matching.trial_index import MANIFEST

    named = index.manifest.get("encoder_name")
    return None if named is None else model_named_in(folder / MANIFEST, named, {SHIPPED, BASELINE})
