"""Which linkers a :class:`~medlink.trials.normalization.normalizer.TrialNormalizer` uses, as a small picklable
description, so that each worker process of ``medlink trials normalize --workers N`` builds its own and the command
line, the evaluation and the workers read options the same way."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

from medlink.linking import Linker, LinkerConfig
from medlink.linking.spec import DESCRIPTORS, MESH, EmbeddedDefault, ExactMatch, LinkerSpec, from_own_folders
from medlink.options import setting
from medlink.trials.normalization.normalizer import NilThresholds, TrialNormalizer

# The normalizer applies its own nil thresholds per field, so its linkers decide without one (0: not even an
# index's calibrated threshold, which None would keep).
_NO_NIL = LinkerConfig(nil_threshold=0)


@dataclass(frozen=True)
class NormalizerSpec:
    """Conditions (and non-drug interventions) linked by ``conditions`` (default: the embedded MeSH descriptors, over
    which the per-field nil thresholds were calibrated); drug-like interventions by ``interventions`` (default: the
    embedded MeSH, descriptors + supplementary records), or by the same linker when it is ``None``."""

    conditions: LinkerSpec = field(default_factory=lambda: EmbeddedDefault(DESCRIPTORS))
    interventions: LinkerSpec | None = field(default_factory=lambda: EmbeddedDefault(MESH))
    thresholds: NilThresholds = field(default_factory=NilThresholds)
    batch_records: int = setting(
        256, "Records linked together (larger: fuller encoder batches, more memory).", minimum=1
    )
    refine: bool = setting(True, "Add to each linked condition the narrower concepts the title or summary names.")
    shorthand: bool = setting(True, "Also search strings with clinical shorthand spelled out ('T2DM', 'NSCLC').")
    respell: bool = setting(
        True,
        "Also search British spellings the American way, salts as their parent drug, "
        "labelled compounds without their isotope label, possessive eponyms as their "
        "disease.",
    )
    qualifiers: bool = setting(
        True,
        "Also link conditions without staging and course qualifiers ('Stage IIIB "
        "Breast Cancer', 'Recurrent Adult Burkitt Lymphoma') and keep the better "
        "spelling.",
    )

    @property
    def linker_specs(self) -> tuple[LinkerSpec, ...]:
        return (self.conditions,) if self.interventions is None else (self.conditions, self.interventions)

    def build(self, progress: bool = True) -> TrialNormalizer:
        config = replace(_NO_NIL, shorthand=self.shorthand, respell=self.respell)
        conditions = Linker.load(self.conditions, config=config, progress=progress)
        if self.interventions is None or self.interventions == self.conditions:
            interventions = conditions
        else:
            drug_config = _drug_config(self.interventions, config)
            interventions = Linker.load(self.interventions, config=drug_config, progress=progress)
        return TrialNormalizer(
            conditions,
            interventions,
            self.thresholds,
            self.batch_records,
            refine=self.refine,
            qualifiers=self.qualifiers,
        )


def drug_spec_for(linker: Linker) -> LinkerSpec | None:
    """The embedded MeSH (descriptors + supplementary records) with ``linker``'s choices (exact only, the HNSW beam)
    when ``linker`` is an embedded default, else ``None``: a linker of the user's own links drugs itself."""
    spec = linker.spec
    if spec is None or from_own_folders(spec):
        return None
    if isinstance(spec, EmbeddedDefault):
        return replace(spec, embedded=MESH, reranker=None)
    return replace(spec, embedded=MESH) if isinstance(spec, ExactMatch) else None


def normalizer_around(
    linker: Linker, thresholds: NilThresholds | None = None, progress: bool = False
) -> TrialNormalizer:
    """The normalizer a service that holds ``linker`` answers with, deciding as ``medlink trials normalize`` does:
    conditions by ``linker`` itself (nothing reloaded), drug-like interventions by the embedded drug default when
    ``linker`` is the embedded default (whose thresholds were calibrated with it), else by ``linker`` too."""
    # the service's own settings (branches, shorthand, …) stay; the normalizer's per-field thresholds decide nil
    conditions = linker.with_config(replace(linker.config, nil_threshold=0))
    drugs = drug_spec_for(linker)
    if drugs is None:
        return TrialNormalizer(conditions, conditions, thresholds or NilThresholds())
    own = linker.config
    drug_config = _drug_config(
        drugs, replace(_NO_NIL, shorthand=own.shorthand, shorthand_file=own.shorthand_file, respell=own.respell)
    )
    # The service's linker is the embedded default itself (all of MeSH) in the usual case: its parts serve the
    # drugs too, instead of a second copy of the terminology, index and encoder in every process.
    interventions = (
        linker.with_config(drug_config)
        if drugs == linker.spec
        else Linker.load(drugs, config=drug_config, progress=progress)
    )
    return TrialNormalizer(conditions, interventions, thresholds or NilThresholds())


def _drug_config(spec: LinkerSpec, config: LinkerConfig) -> LinkerConfig:
    """The embedded default links drugs without the shipped reranker, as when the interventions' nil threshold was
    calibrated (docs/trials.md); a reranker of the user's own stays."""
    return replace(config, rerank=False) if isinstance(spec, EmbeddedDefault) and spec.reranker is None else config


@functools.cache
def normalizer_in_process(spec: NormalizerSpec) -> TrialNormalizer:
    """The normalizer ``spec`` describes, built once per process: what each worker of ``medlink trials normalize
    --workers N`` and each Spark Python worker links with. Process-wide state, kept in this one pattern (a memoized
    loader), because a worker has no other object that outlives its tasks."""
    return spec.build(progress=False)
