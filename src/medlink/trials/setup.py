"""Which linkers a :class:`~medlink.trials.normalize.TrialNormalizer` uses, as a small picklable description, so
that each worker process of ``medlink trials normalize --workers N`` builds its own (an ONNX session cannot be
pickled) and the command line, the evaluation and the workers read options the same way."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from medlink.linking import Linker, LinkerConfig
from medlink.terminology import MedlinkError
from medlink.trials.normalize import NilThresholds, TrialNormalizer


@dataclass(frozen=True)
class LinkerSpec:
    """A linker over ``index_dir`` (dense, with the index's own terminology unless ``terminology_dir`` is given),
    over ``terminology_dir`` alone (exact match only), or the embedded default (MeSH descriptors, exact → dense)."""

    index_dir: Path | None = None
    terminology_dir: Path | None = None
    exact_only: bool = False
    sieves: str | None = None

    @property
    def exact(self) -> bool:
        return self.exact_only or (self.terminology_dir is not None and self.index_dir is None)

    @property
    def uses_default_index(self) -> bool:
        """Whether :meth:`build` opens the embedded default's index (built and cached on first use)."""
        return not self.exact and self.index_dir is None

    def build(self, progress: bool = True) -> Linker:
        # The normalizer applies its own nil thresholds per field, so the linker decides without one.
        config = LinkerConfig(nil_threshold=None)
        if self.exact:
            from medlink.resources import load_default_terminology
            from medlink.terminology import load_terminology

            if self.index_dir is not None:
                raise MedlinkError("exact-only linking searches no index: drop the index option or --exact-only")
            terminology = load_terminology(self.terminology_dir) if self.terminology_dir else load_default_terminology()
            return Linker(terminology, config=config)
        from medlink.linking.pipeline import DEFAULT_SIEVES, default_index, open_index_linker

        folder = self.index_dir or default_index(progress)
        return open_index_linker(folder, self.terminology_dir, self.sieves or DEFAULT_SIEVES, config=config)


@dataclass(frozen=True)
class NormalizerSpec:
    """Conditions (and non-drug interventions) linked by ``conditions``; drug-like interventions by
    ``interventions``, or by the same linker when it is ``None``."""

    conditions: LinkerSpec = field(default_factory=LinkerSpec)
    interventions: LinkerSpec | None = None
    thresholds: NilThresholds = field(default_factory=NilThresholds)
    batch_records: int = 256

    def build(self, progress: bool = True) -> TrialNormalizer:
        conditions = self.conditions.build(progress)
        if self.interventions is None or self.interventions == self.conditions:
            interventions = conditions
        else:
            interventions = self.interventions.build(progress)
        return TrialNormalizer(conditions, interventions, self.thresholds, self.batch_records)
