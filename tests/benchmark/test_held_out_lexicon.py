"""The benchmark scores medlink's default annotation with the corpus lexicon it ships, except on documents that
lexicon was learned from: there it learns the same lexicon again from the public sources that hold none of them."""

from pathlib import Path

import pytest

from medlink.benchmark.annotation_runs import held_out_corpus_lexicon
from medlink.evaluation.corpus_formats import load_corpus
from medlink.linking.annotation.corpus_lexicon import packaged_corpus_lexicon, read_corpus_lexicon


def _document(pmid: str, title: str, marks: list[tuple[str, str, str]]) -> str:
    lines = [f"{pmid}|t|{title}", f"{pmid}|a|"]
    for form, kind, concept in marks:
        start = title.index(form)
        lines.append(f"{pmid}\t{start}\t{start + len(form)}\t{form}\t{kind}\t{concept}")
    return "\n".join(lines) + "\n\n"


def test_a_corpus_the_shipped_lexicon_saw_gets_one_learned_without_it(tmp_path: Path) -> None:
    packaged = packaged_corpus_lexicon()
    if packaged is None:
        pytest.skip("needs medlink[tagger], which ships the corpus lexicon")
    seen = sorted(packaged.documents)[0]
    corpora = tmp_path / "data" / "corpora"
    files = {
        "bc5cdr/CDR_TrainingSet.PubTator.txt": _document(
            "990000001",
            "Nephrotoxicity after cisplatin.",
            [("Nephrotoxicity", "Disease", "D007674"), ("cisplatin", "Chemical", "D002945")],
        ),
        "bc5cdr/CDR_DevelopmentSet.PubTator.txt": _document(seen, "Hepatitis.", [("Hepatitis", "Disease", "D006505")]),
        "ncbi-disease/NCBItrainset_corpus.txt": _document(
            "990000002", "Breast cancer.", [("Breast cancer", "SpecificDisease", "D001943")]
        ),
        "ncbi-disease/NCBIdevelopset_corpus.txt": _document(
            "990000003", "Ovarian cancer.", [("Ovarian cancer", "SpecificDisease", "D010051")]
        ),
    }
    for name, text in files.items():
        (corpora / name).parent.mkdir(parents=True, exist_ok=True)
        (corpora / name).write_text(text, encoding="utf-8")
    dev = load_corpus(f"pubtator:{corpora / 'bc5cdr/CDR_DevelopmentSet.PubTator.txt'}")
    path = held_out_corpus_lexicon(dev, tmp_path / "data", tmp_path / "work")
    assert path is not None
    learned = read_corpus_lexicon(path)
    assert not learned.learned_from_any([seen])
    assert learned.learned_from_any(["990000001"]) and learned.learned_from_any(["990000003"])
    assert not any(source.startswith("BC5CDR dev") for source in learned.sources)
    stamp = path.stat().st_mtime_ns  # learned once: the second run reads it
    assert held_out_corpus_lexicon(dev, tmp_path / "data", tmp_path / "work") == path
    assert path.stat().st_mtime_ns == stamp
    train = load_corpus(f"pubtator:{corpora / 'bc5cdr/CDR_TrainingSet.PubTator.txt'}")  # never in the shipped one
    assert held_out_corpus_lexicon(train, tmp_path / "data", tmp_path / "work") is None
    (corpora / "ncbi-disease/NCBIdevelopset_corpus.txt").unlink()  # a source missing: left off, as before
    assert held_out_corpus_lexicon(dev, tmp_path / "data", tmp_path / "other-work") is None
