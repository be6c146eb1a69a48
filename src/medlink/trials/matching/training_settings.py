"""The settings of the two trial trainers, free of torch so that the command line reads them for its options:
the patient and trial encoders (:mod:`~medlink.trials.matching.encoder_training`) and the eligibility
cross-encoder (:mod:`~medlink.trials.matching.eligibility_reranker`)."""

from __future__ import annotations

from dataclasses import dataclass

from medlink.options import setting

# A trained trial model is a folder: the two encoders in these subfolders, and a manifest saying how they were made.
MANIFEST = "trial_model.json"
PATIENT, TRIAL = "patient", "trial"


@dataclass(frozen=True)
class TrainingLoopSettings:
    """What both trial trainers' loops take; each trainer's settings add their own."""

    epochs: int = setting(1, "Passes over the training pairs.", minimum=1)
    batch_size: int = setting(16, "Pairs per batch.", minimum=2)
    lr: float = 2e-5
    warmup: float = 0.1
    max_length: int = 128  # tokens per text while training; criteria beyond it are cut
    seed: int = 0
    max_steps: int | None = setting(None, "Stop after this many optimizer steps.", minimum=1)
    checkpoint_every: int = 50
    time_limit: float | None = setting(None, "Seconds: stop (and save) after the step that reaches them.")
    device: str = setting("auto", "cpu, cuda, or auto (a GPU when torch sees one).")


@dataclass(frozen=True)
class TrialTrainConfig(TrainingLoopSettings):
    """The patient and trial encoders. Defaults: one CPU epoch over a few thousand records from the packaged
    MiniLM."""

    margin: float = 0.3  # of the cosine-distance triplet (distances lie in [0, 2])
    trial_to_patient_weight: float = 1.0  # λ of L_t2p
    freeze_layers: int = setting(
        0, "Keep the embeddings and this many lower layers of both encoders as in the base model.", minimum=0
    )


@dataclass(frozen=True)
class EligibilityConfig(TrainingLoopSettings):
    """The eligibility cross-encoder: longer inputs (criteria beside a description), a higher learning rate."""

    lr: float = 3e-5
    max_length: int = 256
    other_trial_negatives: bool = setting(
        False, "Also teach that another trial's inclusion criteria do not fit (an addition to the paper)."
    )
    quantize: str = setting("none", "int8: dynamic quantization of the exported MatMuls.", choices=("none", "int8"))
