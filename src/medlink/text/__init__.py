"""Text normalization used identically for terminology names and mentions."""

from medlink.text.normalize import NORMALIZER_VERSION, Normalizer, NormalizerConfig, normalize

__all__ = ["NORMALIZER_VERSION", "Normalizer", "NormalizerConfig", "normalize"]
