"""The rerank stage: a cross-encoder that reads the mention beside each candidate (keywords marked), fused with
the retriever's score (Liang et al.)."""
