"""The work behind the service's requests, in one place whether it runs in a thread of the service or in a worker
process of its own (``serve/workers.py``): link a batch, annotate documents, normalize trial records, match a
note. A worker process holds one :class:`ServiceWork`, set by :func:`hold` when it starts, and answers
:func:`run` calls by method name."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from medlink.errors import MedlinkError
from medlink.linking import Linker, LinkResult, Mention
from medlink.linking.annotation.annotator import Annotation, AnnotatorConfig, with_span_sources

if TYPE_CHECKING:  # the trial modules load only when a trial request comes
    from medlink.trials.matching.matcher import MatchResult, TrialMatcher
    from medlink.trials.normalization.normalizer import NormalizedTrial, TrialNormalizer
    from medlink.trials.records import TrialRecord

# A misspelling opens the encoder and searches the index; a word no name has (a number) makes the form test read
# the terminology's words: seconds, once, which no request should wait for.
WARM_UP = ("myocardal infarction", "myocardial infarction 2")


def annotator_config(linker: Linker, base: AnnotatorConfig, context: bool, entity_type: str | None) -> AnnotatorConfig:
    """The annotation settings of a request, over the service's ``base`` (its tagger and corpus lexicon kept to
    ``entity_type``); a :class:`MedlinkError` says why an ``entity_type`` cannot be used."""
    from medlink.linking.mentions.branches import branches_for, has_tree_numbers

    config = with_span_sources(replace(base, context=context), base.tagger, base.corpus, entity_type)
    if not entity_type:
        return config
    if not has_tree_numbers(linker.terminology):
        raise MedlinkError("this service's terminology has no tree numbers to restrict by entity_type")
    return replace(config, branches=branches_for(entity_type))


@dataclass
class ServiceWork:
    """The service's linker, trial matcher and annotation settings (with its span tagger and corpus lexicon), and
    the trial normalizer, made on first use."""

    linker: Linker
    matcher: TrialMatcher | None = None
    annotation: AnnotatorConfig = field(default_factory=AnnotatorConfig)
    _normalizer: TrialNormalizer | None = None

    def link_many(self, mentions: Sequence[str | Mention]) -> list[LinkResult]:
        return self.linker.link_many(mentions)

    def annotate_many(self, texts: list[str], context: bool, entity_type: str | None) -> list[list[Annotation]]:
        config = annotator_config(self.linker, self.annotation, context, entity_type)
        return self.linker.annotate_many(texts, config)

    def prepare_normalizer(self) -> None:
        """Make the trial normalizer (it loads the drug terminology: seconds, once), so that no request's time
        budget pays for it."""
        from medlink.trials.normalization.normalizer_spec import normalizer_around

        if self._normalizer is None:
            self._normalizer = normalizer_around(self.linker)

    def normalize_batch(self, records: list[TrialRecord]) -> list[NormalizedTrial]:
        self.prepare_normalizer()
        assert self._normalizer is not None
        return self._normalizer.normalize_batch(records)

    def match(self, note: str, top: int) -> MatchResult:
        if self.matcher is None:
            raise MedlinkError("this service has no trial index")
        return self.matcher.match(note, top)


_HELD: list[ServiceWork] = []  # a worker process's one ServiceWork: the process exists to hold it


def hold(work: ServiceWork) -> int:
    """In a worker process: keep ``work`` (unpickled here: its linker loads from its spec) and warm it up, so
    that the first request pays for nothing but itself. Returns the worker's process id."""
    work.link_many(list(WARM_UP))
    work.annotate_many([WARM_UP[0]], True, None)  # the annotator's lexicon is made for the terminology once
    if work.annotation.name_checks:  # counted over every name once: not on a request's time
        work.linker.terminology.name_statistics  # noqa: B018
    _HELD[:] = [work]
    return os.getpid()


def run(method: str, *args: Any) -> Any:
    """In a worker process: ``method`` of the work it holds."""
    if not _HELD:
        raise MedlinkError("this worker process holds no service work yet")
    return getattr(_HELD[0], method)(*args)
