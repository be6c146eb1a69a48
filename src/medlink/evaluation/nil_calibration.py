"""How medlink calibrates nil by default: what ``index build --train``, the embedded default
(``scripts/calibrate_default_nil.py``) and ``benchmarks/nil_threshold.py`` run.

The ``budget`` threshold on training mentions and the calibration half of medlink's non-medical negatives; with an
encoder, a term model takes the budget and the threshold drops to ``max-tp`` beneath it. Training mentions are
linked over names only: over an index that holds them, each would find itself.
"""

from __future__ import annotations

from dataclasses import replace

from medlink.encoders.base import Encoder
from medlink.evaluation.calibration import DEFAULT_MAX_LOSS, Calibration, calibrate_decisions, decide
from medlink.evaluation.corpus import Corpus
from medlink.evaluation.negatives import non_medical_negatives
from medlink.evaluation.term_model_fit import fit_term_model
from medlink.linking import Linker


def calibrate_with_negatives(
    linker: Linker, corpus: Corpus, max_loss: float = DEFAULT_MAX_LOSS, encoder: Encoder | None = None
) -> Calibration:
    """The ``budget`` threshold on ``corpus`` and the calibration half of medlink's non-medical negatives: how
    ``index build --train``, the embedded default and the benchmarks choose one. ``linker`` should search names
    only: over training mentions, every training mention would find itself.

    With the ``encoder`` the linker's dense sieves use, a term model is fitted too and takes the budget; the
    threshold then drops to ``max-tp`` (no correct calibration decision below it), a floor under the model."""
    negatives = [n.text for n in non_medical_negatives(linker.terminology, "calibration")]
    decisions = decide(linker, corpus, negatives)
    calibration = calibrate_decisions(decisions, "budget", max_loss)
    if encoder is None or calibration.thresholds["max-tp"] is None:
        return calibration
    floor = calibration.thresholds["max-tp"]
    model, caught = fit_term_model(decisions, linker.terminology, encoder, max_loss, floor)
    share = dict(calibration.negatives_nil or {}, **{"max-tp + term model": caught})
    return replace(
        calibration, strategy="max-tp + term model", threshold=floor, negatives_nil=share, term_model=model.to_dict()
    )


def in_terminology(corpus: Corpus, linker: Linker) -> Corpus:
    """The mentions whose every gold id the linker's terminology has (and the nil ones): a corpus annotated with a
    larger vocabulary, calibrated against a smaller one."""
    terminology = linker.terminology
    kept = tuple(m for m in corpus if all(any(i in terminology for i in part) for part in m.gold.parts))
    return replace(corpus, name=f"{corpus.name} (gold in the terminology)", mentions=kept)
