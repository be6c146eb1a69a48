"""The two encoders of TrialMatcher (Jin et al., shared/papers/003, eq. 6–8): one for patients (notes, and criteria,
which stand in for patients) and one for trial descriptions.

A name is either a trial model folder written by ``medlink trials train`` (``patient/``, ``trial/`` and
``trial_model.json``), ``trial-matcher`` (medlink's, the default: a distribution of its own that ``medlink[trials]``
installs), or any term encoder name (``minilm``, ``medlink``, a model folder, a hub name), which then encodes both
sides: the zero-shot baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlink.encoders.base import Encoder
from medlink.encoders.registry import load_encoder
from medlink.errors import MedlinkError
from medlink.trials.matching.training_settings import MANIFEST, PATIENT, TRIAL

MAX_TOKENS = 256  # notes and descriptions are long; MiniLM was trained on 256-token inputs
SHIPPED = "trial-matcher"
BASELINE = "minilm"


@dataclass(frozen=True)
class TrialEncoders:
    """``patient`` encodes notes and criteria, ``trial`` encodes descriptions; both unit-length vectors."""

    name: str
    patient: Encoder
    trial: Encoder

    @property
    def dimension(self) -> int:
        return self.patient.dimension

    def identity(self) -> dict[str, Any]:
        """What an index records: both encoders' identities."""
        return {PATIENT: asdict(self.patient.identity), TRIAL: asdict(self.trial.identity)}

    def fingerprints(self) -> dict[str, str]:
        """What an index checks: what changes the vectors, not where the model lies on this machine."""
        return {PATIENT: self.patient.identity.fingerprint(), TRIAL: self.trial.identity.fingerprint()}

    def encode_patients(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        return self.patient.encode(list(texts), batch_size=32, progress=progress)

    def encode_trials(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        return self.trial.encode(list(texts), batch_size=32, progress=progress)


def default_trial_encoders() -> str:
    """medlink's TrialMatcher encoders; without their distribution, an error naming the extra that installs them
    (the zero-shot baseline stays one ``--encoders minilm`` away, but is never chosen silently)."""
    from medlink.models.catalog import installed_model_folder

    try:
        installed_model_folder(SHIPPED)
    except MedlinkError as missing:
        raise MedlinkError(f"{missing} (or pass --encoders {BASELINE} for the zero-shot baseline)") from None
    return SHIPPED


def load_trial_encoders(name: str | None = None, quantize: str = "none") -> TrialEncoders:
    name = name or default_trial_encoders()
    folder = _trial_model_folder(name)
    if folder is None:
        encoder = load_encoder(name, quantize=quantize, max_length=MAX_TOKENS)
        return TrialEncoders(name, encoder, encoder)
    return TrialEncoders(
        name,
        load_encoder(str(folder / PATIENT), quantize=quantize, max_length=MAX_TOKENS),
        load_encoder(str(folder / TRIAL), quantize=quantize, max_length=MAX_TOKENS),
    )


def _trial_model_folder(name: str) -> Path | None:
    if name == SHIPPED:
        from medlink.models.catalog import installed_model_folder

        return installed_model_folder(SHIPPED)
    folder = Path(name)
    return folder if (folder / MANIFEST).exists() else None
