"""Patient-to-trial matching (TrialMatcher: Jin et al., TREC CT 2021, shared/papers/003): trial encoders trained on
eligibility criteria, a trial index, scores fused from dense, BM25, concept and age / sex evidence, a cross-encoder
reranker, and TREC metrics.

``texts``: the three views of a trial (description, inclusion, exclusion); ``encoder_training`` (with
``training_settings``): the patient and trial encoders (eq. 1–4); ``encoders``: loading them; ``trial_index`` /
``index_build``: the trial index; ``bm25``, ``notes``, ``scoring``: the evidence and its fusion (eq. 5);
``trial_reranker``, ``eligibility_reranker``: cross-encoders; ``matcher``: note in, ranked trials with why out;
``matcher_spec``: a matcher from a small description; ``judged_collections``, ``runs``, ``metrics``: BIRCO and TREC
CT collections, runs, NDCG@10 and friends.

    from medlink.trials.matching import MatcherSpec
    matcher = MatcherSpec("trial-index/").build()
    for trial in matcher.match("A 58-year-old woman with type 2 diabetes ...", top=5).trials:
        print(trial.nct_id, trial.score, trial.best_inclusion, trial.fired_exclusions)
"""

from medlink.trials.matching.matcher import MatchResult, TrialMatch, TrialMatcher
from medlink.trials.matching.matcher_spec import MatcherSpec

__all__ = ["MatchResult", "MatcherSpec", "TrialMatch", "TrialMatcher"]
