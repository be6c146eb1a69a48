"""Mentions that name several concepts: a learned set ranker over retrieval, sparse and memory features (Liang
et al.; CHIP-CDN)."""
