"""Bad terminology input: clear errors naming file and line, or counted warnings, never a traceback."""

import gzip
from pathlib import Path

import pytest

from medlink.terminology import (
    MedlinkError,
    ReadReport,
    SourceError,
    SourceSpec,
    TerminologyBuilder,
    compile_terminology,
)
from medlink.terminology.readers import read_source
from medlink.terminology.records import make_concept


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_malformed_line_is_skipped_and_counted(tmp_path: Path) -> None:
    path = write(tmp_path / "medic.txt", "D1||one\nthis line has no separator\nD2||two\n")
    report = ReadReport()
    concepts = list(read_source(path, "biosyn", report))
    assert [c.id for c in concepts] == ["MESH:D1", "MESH:D2"]
    assert report.counts["malformed lines skipped"] == 1
    assert report.examples["malformed lines skipped"][0].startswith(f"{path}:2: ")


def test_strict_mode_names_file_line_and_problem(tmp_path: Path) -> None:
    path = write(tmp_path / "medic.txt", "D1||one\nthis line has no separator\n")
    with pytest.raises(SourceError) as error:
        list(read_source(path, "biosyn", ReadReport(strict=True)))
    assert error.value.line == 2
    assert str(error.value) == f"{path}:2: expected 'id||name|synonym…' (no '||' separator)"


def test_wrong_encoding_is_explained(tmp_path: Path) -> None:
    path = write(tmp_path / "terms.tsv", "X1\tfirst\nX2\tMénière disease\n", encoding="latin-1")
    with pytest.raises(SourceError, match=r"terms.tsv:2: not valid utf-8 \(byte 0xe9 at column 5\)"):
        list(read_source(path, "tsv", ReadReport()))


def test_gz_name_without_gzip_content(tmp_path: Path) -> None:
    path = write(tmp_path / "hp.obo.gz", "[Term]\nid: HP:1\nname: x\n")
    with pytest.raises(SourceError, match="not gzip-compressed"):
        list(read_source(path, "obo", ReadReport()))


def test_truncated_gzip_is_explained(tmp_path: Path) -> None:
    data = gzip.compress(b"".join(b"D%d||name %d\n" % (i, i) for i in range(5000)))
    path = tmp_path / "medic.txt.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match="compressed data is corrupt or truncated after line"):
        list(read_source(path, "biosyn", ReadReport()))


def test_empty_names_dropped_with_a_count(tmp_path: Path) -> None:
    path = write(tmp_path / "medic.txt", "D1||one| |two||\n")
    report = ReadReport()
    [concept] = read_source(path, "biosyn", report)
    assert [n.text for n in concept.names] == ["one", "two"]
    assert report.counts["empty names dropped"] == 1


def test_record_without_any_name_is_a_problem(tmp_path: Path) -> None:
    path = write(tmp_path / "t.tsv", "X1\t\nX2\tsecond\n")
    report = ReadReport()
    assert [c.id for c in read_source(path, "tsv", report, namespace="T")] == ["T:X2"]
    assert report.counts["empty names dropped"] == 1


def test_invalid_concept_id_is_a_problem(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", '{"id": "has space", "name": "x"}\n{"id": "ok", "name": "y"}\n')
    report = ReadReport()
    assert [c.id for c in read_source(path, "jsonl", report, namespace="T")] == ["T:ok"]
    assert "invalid concept id" in report.examples["malformed lines skipped"][0]


def test_duplicate_ids_merged_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path / "medic.txt", "D1||one|uno\nD1||one again|eins\n")
    report = ReadReport()
    terminology = compile_terminology([SourceSpec(path, "biosyn")], report)
    assert len(terminology) == 1
    assert [n.text for n in terminology.concept("MESH:D1").names] == ["one", "uno", "one again", "eins"]
    assert terminology.concept("MESH:D1").preferred_name == "one"
    assert report.counts["duplicate ids merged"] == 1


def test_is_a_cycle_reported_and_broken() -> None:
    report = ReadReport()
    builder = TerminologyBuilder(report)
    builder.add(make_concept("T:a", "a", parents=("T:c",)))
    builder.add(make_concept("T:b", "b", parents=("T:a",)))
    builder.add(make_concept("T:c", "c", parents=("T:b",)))
    terminology = builder.build()
    assert report.counts["is_a cycles broken"] == 1
    assert report.examples["is_a cycles broken"] == ["T:a is_a T:c is_a T:b is_a T:a"]
    edges = sum(len(terminology.parents(cid)) for cid in terminology.ids)
    assert edges == 2
    assert set(terminology.ancestors("T:a")) <= {"T:b", "T:c"}


def test_is_a_cycle_is_an_error_in_strict_mode() -> None:
    builder = TerminologyBuilder(ReadReport(strict=True))
    builder.add(make_concept("T:a", "a", parents=("T:b",)))
    builder.add(make_concept("T:b", "b", parents=("T:a",)))
    with pytest.raises(MedlinkError, match="is_a cycle: T:a is_a T:b is_a T:a"):
        builder.build()


def test_parent_given_by_alt_id_resolves_and_unknown_parent_is_dropped() -> None:
    report = ReadReport()
    builder = TerminologyBuilder(report)
    builder.add(make_concept("T:a", "a", alt_ids=("T:old",)))
    builder.add(make_concept("T:b", "b", parents=("T:old", "T:nowhere")))
    terminology = builder.build()
    assert terminology.parents("T:b") == ("T:a",)
    assert report.counts["parents not in the terminology dropped"] == 1


def test_xml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "desc2025.xml", "<DescriptorRecordSet>\n<DescriptorRecord>\n</Oops>\n")
    with pytest.raises(SourceError, match=r"desc2025.xml:3: malformed XML"):
        list(read_source(path, "mesh-xml", ReadReport()))


@pytest.mark.parametrize("text", ["", "garbage line\nno tab here either\n"])
def test_sources_holding_no_concept_are_an_error_not_an_empty_terminology(tmp_path: Path, text: str) -> None:
    from click.testing import CliRunner

    from medlink.cli import main

    path = write(tmp_path / "terms.tsv", text)
    with pytest.raises(MedlinkError, match=r"no concept found in .*terms\.tsv \(as tsv\)"):
        compile_terminology([SourceSpec(path, "tsv")])
    result = CliRunner().invoke(main, ["terminology", "compile", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code != 0 and "medlink terminology formats" in result.output
    assert not (tmp_path / "out").exists()


def test_filters_that_leave_nothing_fail_and_say_what_there_is(fixtures: Path) -> None:
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.evaluation.runner import evaluate
    from medlink.linking import Linker
    from medlink.terminology import load_default_terminology

    with pytest.raises(MedlinkError, match="has no mention of type 'Protein'; its types are: Chemical, Disease"):
        load_corpus(f"pubtator:{fixtures / 'tiny.pubtator'}", "Protein")
    corpus = load_corpus(f"pubtator:{fixtures / 'tiny.pubtator'}")
    linker = Linker(load_default_terminology())
    with pytest.raises(MedlinkError, match="no mention to evaluate in the zero-shot subset"):
        evaluate(linker, corpus, train=corpus, subset="zero-shot")
