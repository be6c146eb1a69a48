"""QuickUMLS and MedCAT run for real (offline, as benchmark/peers/ runs them), on names only and with the training
mentions as synonyms, linking mentions and annotating documents; medlink annotates beside them in the same report."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from medlink.benchmark.config import load_config
from medlink.errors import MedlinkError

TERMS = "T1\tmyocardial infarction\nT1\theart attack\nT2\tdiabetes mellitus\nT3\thypertension\nT4\tasthma\n"
# "sugar disease" is no name of T2: only its training mentions teach it
TEST = "heart attack\tT1\ndiabetes mellitus\tT2\nsugar disease\tT2\nhypertension\tT3\n"
TRAIN = "sugar disease\tT2\nheart attack\tT1\n"


def pubtator(pmid: int, title: str, abstract: str, marks: list[tuple[str, str]]) -> str:
    text = f"{title} {abstract}"
    lines = [f"{pmid}|t|{title}", f"{pmid}|a|{abstract}"]
    at = 0
    for form, concept in marks:
        start = text.index(form, at)
        at = start + len(form)
        lines.append(f"{pmid}\t{start}\t{at}\t{form}\tDisease\t{concept}")
    return "\n".join(lines) + "\n\n"


TRAIN_DOCS = pubtator(
    1,
    "Heart attack in patients with sugar disease.",
    "Sugar disease raises the risk of heart attack and hypertension.",
    [
        ("Heart attack", "T1"),
        ("sugar disease", "T2"),
        ("Sugar disease", "T2"),
        ("heart attack", "T1"),
        ("hypertension", "T3"),
    ],
)
TEST_DOCS = pubtator(
    2,
    "Sugar disease and asthma.",
    "Patients with sugar disease had hypertension, not myocardial infarction.",
    [
        ("Sugar disease", "T2"),
        ("asthma", "T4"),
        ("sugar disease", "T2"),
        ("hypertension", "T3"),
        ("myocardial infarction", "T1"),
    ],
)

CONFIG = """
ks = [1, 5]
compare = [["QuickUMLS", "QuickUMLS + training mentions"]]
notes = ["Hand-made toy data."]

[[datasets]]
name = "toy"
terminology = ["tsv:{data}/terms.tsv"]
namespace = "toy"
corpus = "tsv:{data}/test.tsv"
train = "tsv:{data}/train.tsv"

[[systems]]
name = "QuickUMLS"
system = "quickumls"

[[systems]]
name = "QuickUMLS + training mentions"
system = "quickumls"
mentions = true

[[systems]]
name = "MedCAT"
system = "medcat"

[[systems]]
name = "MedCAT + training mentions"
system = "medcat"
mentions = true

[[annotation]]
name = "toy documents"
terminology = ["tsv:{data}/terms.tsv"]
namespace = "toy"
corpus = "pubtator:{data}/test.pubtator"
train = "pubtator:{data}/train.pubtator"

[[annotators]]
name = "medlink annotate (names only)"

[[annotators]]
name = "medlink annotate --train"
mentions = true

[[annotators]]
name = "Gilda + training mentions"
system = "gilda"
mentions = true

[[annotators]]
name = "QuickUMLS"
system = "quickumls"

[[annotators]]
name = "MedCAT + training mentions"
system = "medcat"
mentions = true
"""


def test_quickumls_and_medcat_link_and_annotate_offline_with_and_without_training_mentions(tmp_path: Path) -> None:
    for module in ("quickumls", "medcat", "gensim", "gilda"):
        pytest.importorskip(module, reason="the peer test needs the [test] extras")
    data = tmp_path / "data"
    data.mkdir()
    files = {"terms.tsv": TERMS, "test.tsv": TEST, "train.tsv": TRAIN}
    files |= {"test.pubtator": TEST_DOCS, "train.pubtator": TRAIN_DOCS}
    for name, text in files.items():
        (data / name).write_text(text)
    (tmp_path / "peers.toml").write_text(CONFIG)
    work = tmp_path / "work"
    command = [sys.executable, "-m", "medlink", "benchmark", str(tmp_path / "peers.toml"), "--data", str(data)]
    command += ["--work", str(work), "-o", str(tmp_path / "peers.md")]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=900)
    record = json.loads((tmp_path / "peers.json").read_text())
    rows = {r["system"]: r for r in record["results"]}
    assert all(row["unavailable"] is None for row in rows.values()), rows
    for peer in ("QuickUMLS", "MedCAT"):
        names, taught = rows[peer], rows[f"{peer} + training mentions"]
        # every name of the terminology is found; "sugar disease" only with the training mentions
        assert names["acc@1"] == 0.75 and names["nil_rate"] == 0.25
        assert taught["acc@1"] == 1.0 and taught["nil_rate"] == 0.0
        fold = names["folds"][0]  # its database built once, in a process before the measured one
        assert fold["build_seconds"] > 0 and fold["startup_seconds"] > 0 and fold["peak_rss_mb"] > 20
    annotated = {row["system"]: row for row in record["annotation"]}
    assert all(row["unavailable"] is None for row in annotated.values()), annotated

    # QuickUMLS's NLTK stop words came from a file (offline, a download would have failed the run), and its
    # database over the names was built once: the annotation run loaded the linking run's
    assert len(list(work.glob("peers/*/quickumls/*/built/nltk_data/corpora/stopwords/english"))) == 2
    assert annotated["QuickUMLS"]["build_seconds"] == rows["QuickUMLS"]["folds"][0]["build_seconds"]

    document_f1 = {system: row["document"]["f1"] for system, row in annotated.items()}
    # names alone miss "sugar disease" (T2); the training mentions teach it to medlink and to the peers alike
    assert document_f1["medlink annotate (names only)"] < 1.0 and document_f1["QuickUMLS"] < 1.0
    assert document_f1["medlink annotate --train"] == 1.0
    assert document_f1["Gilda + training mentions"] == 1.0 and document_f1["MedCAT + training mentions"] == 1.0
    markdown = (tmp_path / "peers.md").read_text()
    assert "## Annotating documents end to end" in markdown and "- Hand-made toy data." in markdown
    assert "QuickUMLS is not ahead of QuickUMLS + training mentions on toy" in markdown or (
        "QuickUMLS + training mentions is ahead of QuickUMLS on toy" in markdown
    )
    assert "| toy documents | medlink annotate --train | 1.000 | 1.000 | **1.000** |" in markdown


def test_annotators_are_checked_before_any_work(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    linking = CONFIG.split("[[annotation]]")[0]
    corpus = "[[annotation]]" + CONFIG.split("[[annotation]]")[1].split("[[annotators]]")[0]
    for annotator, message in [
        ('name = "scispaCy"\nsystem = "scispacy"', "unknown system 'scispacy'"),  # it links spans; it finds none
        ('name = "MedCAT"\nsystem = "medcat"\nshipped = true', "shipped applies to medlink only"),
    ]:
        path.write_text(f"{linking}{corpus}[[annotators]]\n{annotator}\n")
        with pytest.raises(MedlinkError, match=message):
            load_config(path)
    path.write_text(linking + corpus)
    with pytest.raises(MedlinkError, match="come together"):
        load_config(path)
