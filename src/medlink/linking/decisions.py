"""What becomes of a sieve's decision before it is returned: numbers made to agree, nil below the threshold or where
the mention reads as no term, and the further concepts a mention claims (within a margin of the best, or as many as
the concept counter predicts). Each function takes a decision and gives it back changed or as it was."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from medlink.linking.mentions.form import judged
from medlink.linking.mentions.non_terms import not_a_term
from medlink.linking.mentions.numbers import agree_on_numbers
from medlink.linking.results import LinkResult, NilCause, Stage
from medlink.linking.settings import (
    RETRIEVAL,
    CandidateReranker,
    ConceptCounter,
    FormTest,
    LinkerConfig,
    TermTest,
)
from medlink.terminology import Terminology


def finish(result: LinkResult, key: str, terminology: Terminology, config: LinkerConfig) -> LinkResult:
    """Numbers agreed, nil below the threshold, and with ``several_within`` the close candidates claimed."""
    if config.number_margin is not None and result.stage in RETRIEVAL:
        result = agree_on_numbers(result, key, terminology, config.number_margin)
    threshold = config.nil_threshold or 0.0
    if config.declares_nil and result.stage is not Stage.EXACT and (result.score or 0.0) < threshold:
        return as_nil(
            result,
            NilCause.THRESHOLD,
            f"best candidate {result.matched_name!r} scored "
            f"{result.score:.3f}, below the nil threshold {threshold:.3f}",
        )
    margin = config.several_within
    if margin is not None and result.candidates and result.score is not None:
        close = [c.concept_id for c in result.candidates if c.score >= result.score - margin]
        return claim(result, close, f"{{}} concepts within {margin} of the best", terminology)
    return result


def judge_terms(
    results: dict[str, LinkResult], term_test: TermTest | None, config: LinkerConfig
) -> dict[str, LinkResult]:
    """Retrieval decisions the term test finds unlike any term become nil (only while nil is declared)."""
    if term_test is None or not config.declares_nil:
        return results
    retrieved = [key for key, result in results.items() if result.stage in RETRIEVAL and result.score is not None]
    if not retrieved:
        return results
    texts = [results[key].mention for key in retrieved]
    decisions = term_test.decisions(texts, [results[key].score or 0.0 for key in retrieved])
    tested = dict(results)
    cut = term_test.cut
    for key, decision in zip(retrieved, decisions, strict=True):
        if decision < cut:
            result = results[key]
            tested[key] = as_nil(
                result,
                NilCause.TERM_TEST,
                f"best candidate {result.matched_name!r} scored "
                f"{result.score:.3f}, but the mention does not read as a term (term model "
                f"{decision:.2f}, below {cut:.2f})",
            )
    return tested


def judge_forms(
    results: dict[str, LinkResult], form_test: FormTest | None, config: LinkerConfig
) -> dict[str, LinkResult]:
    """Retrieval decisions whose found name disagrees with the mention in form become nil (a term the terminology
    lacks, linked to a look-alike: linking/mentions/form.py); only while nil is declared."""
    if form_test is None or not config.declares_nil or not config.form_test:
        return results
    tested = dict(results)
    for key, result in results.items():
        if not judged(result):
            continue
        decision, why = form_test.judge(result)
        if decision < form_test.cut:
            tested[key] = as_nil(
                result,
                NilCause.FORM_TEST,
                f"best candidate {result.matched_name!r} scored "
                f"{result.score:.3f}, but reads as another term: {why} (form test "
                f"{decision:.2f}, below {form_test.cut:.2f})",
            )
    return tested


def claim_counted(
    results: dict[str, LinkResult], counter: ConceptCounter | None, terminology: Terminology, config: LinkerConfig
) -> dict[str, LinkResult]:
    """Retrieval decisions whose mention the counter says names n > 1 concepts claim their n best candidates."""
    if counter is None or not config.count_head:
        return results
    retrieved = [key for key, result in results.items() if result.stage in RETRIEVAL and result.candidates]
    if not retrieved:
        return results
    counts = counter.predict_counts([results[key].mention for key in retrieved])
    claimed = dict(results)
    for key, count in zip(retrieved, counts, strict=True):
        candidates = results[key].candidates
        best = [c.concept_id for c in candidates[:count]]
        why = f"the count head predicts {count} concepts"
        if count >= counter.most:  # "that many or more": the θ rule claims every further confident one
            more = [
                c.concept_id
                for c in candidates[count:]
                if c.rerank_score is not None and c.rerank_score > config.several_above
            ]
            if more:
                best += more
                why += f" or more ({len(more)} more with a fused score above {config.several_above})"
        claimed[key] = claim(results[key], best, why, terminology, limit=len(best))
    return claimed


def claim(
    result: LinkResult, candidates: Sequence[str], why: str, terminology: Terminology, limit: int | None = None
) -> LinkResult:
    """``result`` also claiming ``candidates`` (after its own concepts, at most ``limit`` in all), or unchanged
    when that adds none. ``why`` joins the reason; ``{}`` in it becomes the number of concepts claimed."""
    claimed = tuple(dict.fromkeys([*result.concepts, *candidates]))[:limit]
    if len(claimed) <= len(result.concepts):
        return result
    names = tuple(terminology.concept_preferred_name(c) for c in claimed)
    return replace(
        result,
        concepts=claimed,
        preferred_names=names,
        several=True,
        reason=f"{result.reason}; {why.format(len(claimed))}",
    )


def as_nil(result: LinkResult, cause: NilCause, reason: str) -> LinkResult:
    """``result`` turned nil for ``cause``, its candidates kept so the reason can be checked."""
    return replace(
        result, concepts=(), preferred_names=(), stage=Stage.NIL, several=False, reason=reason, nil_cause=cause
    )


def reranked(
    outcomes: Sequence[LinkResult | None], reranker: CandidateReranker, preferred_name: Callable[[str], str]
) -> list[LinkResult | None]:
    """A sieve's outcomes with its decisions reordered by ``reranker``; undecided ones (``None``) stay."""
    decided = [(i, outcome) for i, outcome in enumerate(outcomes) if outcome is not None]
    out = list(outcomes)
    for (i, _), result in zip(
        decided, reranker.rerank([outcome for _, outcome in decided], preferred_name), strict=True
    ):
        out[i] = result
    return out


def unsearched(text: str, key: str, config: LinkerConfig, terminology: Terminology) -> LinkResult | None:
    """The result of a mention decided before any sieve searches: empty, or (while nil is declared) no term at all
    (no letters, or only function words such as "the of"), unless the terminology has it as a name."""
    if not key:
        return LinkResult(text, (), Stage.EMPTY, reason="the mention has no text to link")
    if config.declares_nil and (why := not_a_term(key)) and not terminology.has_normalized(key):
        return LinkResult(text, (), Stage.NIL, reason=why, nil_cause=NilCause.NOT_A_TERM)
    return None


def not_found(text: str, tried: Sequence[str], branches: Sequence[str]) -> LinkResult:
    """The nil result of a mention no sieve of ``tried`` decided (within ``branches``, when some are set)."""
    scope = f" in branches {','.join(branches)}" if branches else ""
    return LinkResult(
        text,
        (),
        Stage.NIL,
        reason=f"no concept{scope} found by: {', '.join(tried)}",
        nil_cause=NilCause.OUT_OF_SCOPE if scope else NilCause.NO_CANDIDATE,
    )
