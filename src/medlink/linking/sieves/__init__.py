"""The sieves: exact match on normalized text, dense retrieval over name vectors, sparse character n-grams."""
