"""Patient-to-trial matching (TrialMatcher, paper 003): trial encoders trained on eligibility criteria, a trial
index, scores fused from dense, BM25, concept and age / sex evidence, a cross-encoder reranker, and TREC metrics.
"""
