"""``medlink annotate`` over every input format into every output format, and ``medlink eval --end-to-end``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from medlink.cli import main
from support import FIXTURES

NOTE = "No evidence of myocardial infarction; possible pneumonia."


def test_annotate_texts_to_json_lines() -> None:
    result = CliRunner().invoke(main, ["annotate", "--exact-only", "--entity-type", "Disease", NOTE])
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)
    assert row["id"] == "1"
    assert [(a["text"], a["start"], a["negated"], a["uncertain"]) for a in row["annotations"]] == [
        ("myocardial infarction", 15, True, False),
        ("pneumonia", 47, False, True),
    ]


def test_every_input_and_output_format(tmp_path: Path) -> None:
    (tmp_path / "note.txt").write_text(NOTE)
    (tmp_path / "notes.jsonl").write_text(json.dumps({"id": "j1", "text": "Heart attack."}) + "\n")
    (tmp_path / "doc.xml").write_text(
        "<collection><document><id>b1</id><passage><offset>0</offset><text>Asthma."
        "</text></passage><passage><offset>8</offset><text>Pneumonia.</text></passage>"
        "</document></collection>"
    )
    inputs = [
        "--input",
        str(tmp_path / "note.txt"),
        "--input",
        str(tmp_path / "notes.jsonl"),
        "--input",
        f"pubtator:{FIXTURES / 'tiny.pubtator'}",
        "--input",
        f"bioc:{tmp_path / 'doc.xml'}",
    ]
    runner = CliRunner()
    pubtator = runner.invoke(
        main, ["annotate", "--exact-only", "--entity-type", "Disease", *inputs, "--format", "pubtator"]
    )
    assert pubtator.exit_code == 0, pubtator.output
    assert "note|t|" + NOTE in pubtator.output and "j1\t0\t12\tHeart attack\tDisease\tD009203" in pubtator.output
    assert "100|t|Wilson disease and breast cancer.\n100|a|Patients with" in pubtator.output
    assert "b1\t8\t17\tPneumonia\tDisease\tD011014" in pubtator.output  # the second passage, at its offset
    bioc = runner.invoke(
        main, ["annotate", "--exact-only", *inputs, "--format", "bioc", "--output", str(tmp_path / "out.xml")]
    )
    assert bioc.exit_code == 0, bioc.output
    xml = (tmp_path / "out.xml").read_text()
    assert '<infon key="identifier">MESH:D009203</infon>' in xml and '<location offset="0" length="12" />' in xml
    brat = runner.invoke(
        main,
        [
            "annotate",
            "--exact-only",
            "--entity-type",
            "Disease",
            *inputs,
            "--format",
            "brat",
            "--output",
            str(tmp_path / "brat"),
        ],
    )
    assert brat.exit_code == 0, brat.output
    ann = (tmp_path / "brat" / "note.ann").read_text()
    assert (
        "T1\tDisease 15 36\tmyocardial infarction\nN1_1\tReference T1 MESH:D009203\tMyocardial Infarction\n"
        "A1\tNegated T1\n" in ann
    )
    assert (tmp_path / "brat" / "note.txt").read_text() == NOTE


def test_bad_input_is_named(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"id": 1}\n')
    result = CliRunner().invoke(main, ["annotate", "--exact-only", "--input", str(tmp_path / "bad.jsonl")])
    assert result.exit_code != 0 and "bad.jsonl:1" in result.output and 'expected {"id"' in result.output
    assert "give --output FOLDER" in CliRunner().invoke(main, ["annotate", "--format", "brat", "x"]).output


def test_eval_end_to_end() -> None:
    result = CliRunner().invoke(
        main, ["eval", "--end-to-end", "--exact-only", "--corpus", f"pubtator:{FIXTURES / 'tiny.pubtator'}", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["documents"] == 2 and report["document"]["gold"] == 4
    assert 0 < report["mention"]["recall"] <= 1 and report["documents_per_second"] > 0
    text = (
        CliRunner()
        .invoke(main, ["eval", "--end-to-end", "--exact-only", "--corpus", f"pubtator:{FIXTURES / 'tiny.pubtator'}"])
        .output
    )
    assert "mention   precision" in text and "document  precision" in text


def test_an_entity_type_over_a_terminology_without_tree_numbers_selects_training_mentions_only(tmp_path: Path) -> None:
    """MEDIC has no tree numbers: --entity-type then restricts nothing (its concepts are all diseases) instead of
    failing, as in eval --end-to-end."""
    (tmp_path / "terms.tsv").write_text("D009203\tmyocardial infarction\n")
    runner = CliRunner()
    compiled = runner.invoke(
        main,
        [
            "terminology",
            "compile",
            f"tsv:{tmp_path / 'terms.tsv'}",
            "--namespace",
            "MESH",
            "-o",
            str(tmp_path / "terms"),
        ],
    )
    assert compiled.exit_code == 0, compiled.output
    result = runner.invoke(
        main, ["annotate", "--exact-only", "--terminology", str(tmp_path / "terms"), "--entity-type", "Disease", NOTE]
    )
    assert result.exit_code == 0, result.output
    assert [a["concepts"] for a in json.loads(result.output)["annotations"]] == [["MESH:D009203"]]


def test_eval_end_to_end_reads_the_annotator_table_of_its_config(tmp_path: Path) -> None:
    corpus = f"pubtator:{FIXTURES / 'tiny.pubtator'}"
    config = tmp_path / "ablation.toml"
    config.write_text("[annotator]\nmax_words = 1\n")  # one-word names only: the fixture's two-word diseases go
    args = ["eval", "--end-to-end", "--exact-only", "--corpus", corpus, "--json"]
    whole = json.loads(CliRunner().invoke(main, args).output)
    one_word = json.loads(CliRunner().invoke(main, [*args, "--config", str(config)]).output)
    assert one_word["mention"]["recall"] < whole["mention"]["recall"]
    assert "[annotator]" in CliRunner().invoke(main, ["eval", "--print-config"]).output
    config.write_text("[annotator]\nmax_words = 0\n")
    refused = CliRunner().invoke(main, [*args, "--config", str(config)])
    assert refused.exit_code == 2 and "max_words: 0 is below the least allowed" in refused.output


def test_eval_end_to_end_leaves_the_corpus_lexicon_off_for_documents_it_was_learned_from(tmp_path: Path) -> None:
    from medlink.linking.annotation.corpus_lexicon import packaged_corpus_lexicon

    lexicon = packaged_corpus_lexicon()
    if lexicon is None:
        pytest.skip("medlink-span-tagger (and its corpus lexicon) is not installed")
    text = "Cisplatin nephrotoxicity and toxicity.\n"
    learned_from = min(lexicon.documents)
    corpus = tmp_path / "corpus.pubtator"
    for document_id in ("1", learned_from):
        corpus.write_text(
            f"{document_id}|t|{text}{document_id}|a|\n{document_id}\t10\t24\tnephrotoxicity\tDisease\tD007674\n"
        )
        args = ["eval", "--end-to-end", "--exact-only", "--entity-type", "Disease", "--corpus", f"pubtator:{corpus}"]
        report = json.loads(CliRunner().invoke(main, [*args, "--json"]).output)
        off = json.loads(CliRunner().invoke(main, [*args, "--json", "--no-corpus-lexicon"]).output)
        assert off["corpus_lexicon"] is False and off["mention"]["recall"] == 0.0  # no MeSH name: not found
        if document_id == "1":
            assert report["corpus_lexicon"] is True and report["mention"]["recall"] == 1.0 and not report["notes"]
        else:
            assert report["corpus_lexicon"] is False and "learned from documents of this corpus" in report["notes"][0]
    shown = CliRunner().invoke(main, ["annotate", "--exact-only", "--input", f"pubtator:{corpus}"])
    assert "note: 1 of these documents are among those the corpus lexicon was learned from" in shown.output


def test_eval_end_to_end_leaves_the_packaged_tagger_off_on_a_corpus_it_was_trained_on(tmp_path: Path) -> None:
    from medlink.linking.annotation.tagger import choose_tagger

    tagger = choose_tagger("auto")
    if tagger is None:
        pytest.skip("medlink-span-tagger is not installed")
    text = "Cisplatin nephrotoxicity was seen.\n"
    for name in ("unseen.PubTator.txt", tagger.card.trained_on[0]):  # only the file's name says it
        corpus = tmp_path / name
        corpus.write_text(f"1|t|{text}1|a|\n1\t10\t24\tnephrotoxicity\tDisease\tD007674\n")
        args = ["eval", "--end-to-end", "--exact-only", "--corpus", f"pubtator:{corpus}", "--json"]
        for entity_type in ([], ["--entity-type", "Disease"]):
            report = json.loads(CliRunner().invoke(main, [*args, *entity_type]).output)
            trained_on = name == tagger.card.trained_on[0]
            assert (report["tagger"] is None) == trained_on
            assert any("span tagger was trained on this corpus" in note for note in report["notes"]) == trained_on
    own = tmp_path / "own-tagger"  # a tagger the user chose is scored where it trained, but said so
    shutil.copytree(tagger.folder, own)
    report = json.loads(CliRunner().invoke(main, [*args, "--tagger", str(own)]).output)
    assert report["tagger"] == str(own) and any("these figures flatter it" in note for note in report["notes"])


def test_annotate_teaches_what_mesh_lacks_unless_told_not_to() -> None:
    from medlink.linking.annotation.corpus_lexicon import packaged_corpus_lexicon

    if packaged_corpus_lexicon() is None:
        pytest.skip("medlink-span-tagger (and its corpus lexicon) is not installed")
    args = ["annotate", "--exact-only", "--tagger", "none", "--entity-type", "Disease", "Cisplatin nephrotoxicity."]
    taught = json.loads(CliRunner().invoke(main, args).output)["annotations"]
    assert [a["text"] for a in taught] == ["nephrotoxicity"] and "public corpora" in taught[0]["reason"]
    assert json.loads(CliRunner().invoke(main, [*args, "--no-corpus-lexicon"]).output)["annotations"] == []


def test_notes_with_line_breaks_and_tabs_make_well_formed_pubtator_brat_and_bioc(tmp_path: Path) -> None:
    """A clinical note has lines: PubTator's lines and brat's fields hold no line break or tab, BioC no character XML
    cannot hold or reads otherwise ("\r"), and the offsets still point at the mentions (a mention across a line
    break is one brat fragment per line)."""
    text = "Patient with myocardial\n \ninfarction.\r\nNo\tpneumonia.\x0cFever\u2028noted."
    (tmp_path / "notes.jsonl").write_text(json.dumps({"id": "n1", "text": text}) + "\n")
    base = ["annotate", "--exact-only", "--entity-type", "Disease", "--input", str(tmp_path / "notes.jsonl")]
    written = CliRunner().invoke(main, [*base, "--format", "pubtator"])
    assert written.exit_code == 0, written.output
    lines = [line for line in written.output.split("\n") if line]
    assert lines[:2] == ["n1|t|" + "".join(" " if c in "\r\n\t\x0c\u2028" else c for c in text), "n1|a|"]
    mentions = [line.split("\t") for line in lines[2:]]
    assert mentions and all(len(fields) == 6 for fields in mentions)
    (tmp_path / "out.pubtator").write_text(written.output)
    read_back = CliRunner().invoke(main, [*base[:4], "--input", f"pubtator:{tmp_path / 'out.pubtator'}"])
    assert read_back.exit_code == 0, read_back.output
    again = [(a["start"], a["end"], a["text"]) for a in json.loads(read_back.output)["annotations"]]
    assert again == [(int(start), int(end), found) for _, start, end, found, _, _ in mentions]
    assert tuple(found for *_, found in again) == ("myocardial   infarction", "pneumonia", "Fever")

    bioc = CliRunner().invoke(main, [*base, "--format", "bioc"])
    assert bioc.exit_code == 0, bioc.output
    (tmp_path / "out.xml").write_text(bioc.output)
    from_bioc = CliRunner().invoke(main, [*base[:4], "--input", f"bioc:{tmp_path / 'out.xml'}"])
    assert from_bioc.exit_code == 0, from_bioc.output  # a form feed made the XML unreadable
    read = [(a["start"], a["end"]) for a in json.loads(from_bioc.output)["annotations"]]
    assert read == [(start, end) for start, end, _ in again]  # "\r\n" read as "\n" shifted them

    brat = CliRunner().invoke(main, [*base, "--format", "brat", "--output", str(tmp_path / "brat")])
    assert brat.exit_code == 0, brat.output
    entities = [line.split("\t") for line in (tmp_path / "brat" / "n1.ann").read_text().splitlines()]
    first = next(fields for fields in entities if fields[0] == "T1")
    infarction = text.index("infarction")
    assert first[1] == f"Disease 13 23;{infarction} {infarction + 10}" and first[2] == "myocardial infarction"
    assert len(entities) == len((tmp_path / "brat" / "n1.ann").read_text().split("\n")) - 1  # no line split
    assert (tmp_path / "brat" / "n1.txt").read_bytes().decode() == text  # the offsets count its carriage return


def test_what_is_not_text_is_refused_by_file_and_line_not_with_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "note.txt").write_bytes(b"heart attack\nfever \xff\xfe\n")
    latin = CliRunner().invoke(main, ["annotate", "--exact-only", "--input", str(tmp_path / "note.txt")])
    assert latin.exit_code == 1 and "note.txt:2: not UTF-8 text: byte 0xff" in latin.output
    missing = CliRunner().invoke(main, ["annotate", "--exact-only", "--input", str(tmp_path / "none.txt")])
    assert missing.exit_code == 1 and "none.txt: file not found" in missing.output
    (tmp_path / "notes.jsonl").write_text('{"id": "n1", "text": "Pt with \\ud800 heart attack."}\n')
    result = CliRunner().invoke(main, ["annotate", "--exact-only", "--input", str(tmp_path / "notes.jsonl")])
    assert result.exit_code == 1 and "notes.jsonl:1: its text holds a lone surrogate" in result.output
    given = CliRunner().invoke(main, ["annotate", "--exact-only", "heart attack \udcff"])  # argv's undecodable bytes
    assert given.exit_code == 2 and "text 1 holds a lone surrogate" in given.output
