"""Fuzzing with hypothesis: generated bad input (mentions, terminology files, corpus files, trial records, patient
notes, command lines) gets a result or a MedlinkError, never a traceback, and never hangs (each example has a
deadline). ``MEDLINK_FUZZ_EXAMPLES`` sets the examples per property: the default keeps the suite quick; the fuzz
benchmark (docs/reliability.md) runs the same properties with thousands.
"""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="the fuzz tests need the [test] extras (hypothesis)")
from click.testing import CliRunner  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from medlink.cli import main  # noqa: E402
from medlink.errors import MedlinkError  # noqa: E402
from medlink.linking import Linker, Mention  # noqa: E402
from medlink.linking.results import Stage  # noqa: E402
from medlink.terminology import (  # noqa: E402
    SourceSpec,
    compile_terminology,
    load_default_terminology,
)

EXAMPLES = int(os.environ.get("MEDLINK_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=10),
    derandomize=EXAMPLES <= 100,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Text that stresses normalization: control characters, combining marks, other scripts, digits, punctuation.
ANY_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)
MEDICAL_ISH = st.lists(
    st.sampled_from(
        [
            "heart",
            "attack",
            "type",
            "II",
            "2",
            "(",
            ")",
            "and",
            "or",
            "/",
            ",",
            "β",
            "MI",
            "cancer",
            "of",
            "the",
            "-",
            "'s",
            "\t",
            "\x00",
            "ⅱ",
            "糖尿病",
        ]
    ),
    max_size=20,
).map(" ".join)
MENTIONS = st.one_of(ANY_TEXT, MEDICAL_ISH)
LINE = st.one_of(
    ANY_TEXT, st.lists(MEDICAL_ISH, max_size=6).map("\t".join), st.lists(MEDICAL_ISH, max_size=6).map("|".join)
)


TERMINOLOGY_FORMATS = ["tsv", "biosyn", "obo", "ctd", "jsonl", "mesh-desc-tsv", "mesh-supp-tsv"]


@pytest.fixture(scope="module")
def exact_linker() -> Linker:
    return Linker(load_default_terminology())


def _file(text: str, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="medlink-fuzz-"))
    path = folder / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return path


@FUZZ
@given(texts=st.lists(MENTIONS, max_size=8), document=st.one_of(st.none(), ANY_TEXT))
def test_any_mention_links_or_says_why_not(exact_linker: Linker, texts: list[str], document: str | None) -> None:
    results = exact_linker.link_many([Mention(t, document) for t in texts])
    assert len(results) == len(texts)
    for result in results:
        assert isinstance(result.stage, Stage) and result.reason
        assert result.to_dict()["mention"] is not None


@FUZZ
@given(lines=st.lists(LINE, max_size=12), format_name=st.sampled_from(TERMINOLOGY_FORMATS))
def test_any_terminology_file_compiles_or_fails_clearly(lines: list[str], format_name: str) -> None:
    path = _file("\n".join(lines), "terms.txt")
    try:
        terminology = compile_terminology([SourceSpec(path, format_name)])
    except MedlinkError as error:
        assert str(error)
    else:
        assert len(terminology) > 0


@FUZZ
@given(lines=st.lists(LINE, max_size=12), format_name=st.sampled_from(["pubtator", "biosyn", "cadec", "tsv"]))
def test_any_corpus_file_reads_or_fails_clearly(lines: list[str], format_name: str) -> None:
    from medlink.evaluation.corpus_formats import load_corpus

    path = _file("\n".join(lines), "corpus.txt")
    try:
        corpus = load_corpus(f"{format_name}:{path}")
    except MedlinkError as error:
        assert str(error)
    else:
        assert all(isinstance(m.text, str) for m in corpus)


# What an attacker sends: lone surrogates, mentions far over the length limit, composites of thousands of parts.
HOSTILE = st.one_of(
    st.text(st.characters(categories=["Cs"]), min_size=1, max_size=20),
    st.builds(lambda text, bad: text + bad, ANY_TEXT, st.text(st.characters(categories=["Cs"]), max_size=3)),
    st.integers(1_001, 300_000).map(lambda n: "x" * n),
    st.integers(2, 50_000).map(lambda n: "+".join(f"a{i}" for i in range(n))),
    st.integers(2, 2_000).map(lambda n: " and ".join(["heart attack"] * n)),
)


@FUZZ
@given(texts=st.lists(st.one_of(HOSTILE, MENTIONS), min_size=1, max_size=6), document=st.one_of(st.none(), HOSTILE))
def test_any_hostile_mention_links_or_says_why_not(
    exact_linker: Linker, texts: list[str], document: str | None
) -> None:
    results = exact_linker.link_many([Mention(t, document) for t in texts])
    assert [r.mention for r in results] == texts
    assert all(isinstance(r.stage, Stage) and r.reason for r in results)


XML_PARTS = st.sampled_from(
    [
        "<clinical_study>",
        "</clinical_study>",
        "<nct_id>NCT0001</nct_id>",
        "<condition>",
        "</condition>",
        "<eligibility><criteria><textblock>",
        "</textblock></criteria>",
        "</eligibility>",
        "Inclusion Criteria:",
        "- age > 18",
        "<minimum_age>",
        "</minimum_age>",
        "18 Years",
        "abc",
        "&amp;",
        "&bogus;",
        "<!DOCTYPE x [<!ENTITY a 'b'>]>",
    ]
)
JSON_PARTS = st.sampled_from(
    [
        '{"protocolSection": {',
        '"identificationModule": {"nctId": "NCT1"}',
        "}",
        "{",
        "[",
        "]",
        ",",
        '"eligibilityModule": {"eligibilityCriteria": "x", "minimumAge": "2 Decades"}',
        '"conditionsModule": {"conditions": [1, null]}',
        "null",
        '"studies": ',
    ]
)


@FUZZ
@given(
    parts=st.one_of(st.lists(XML_PARTS, max_size=15), st.lists(JSON_PARTS, max_size=15)),
    suffix=st.sampled_from([".xml", ".json", ".jsonl"]),
)
def test_any_trial_record_reads_or_fails_clearly(parts: list[str], suffix: str) -> None:
    from medlink.terminology import ReadReport
    from medlink.trials.readers import read_trials

    path = _file("".join(parts), f"NCT0001{suffix}")
    try:
        records = list(read_trials([path], ReadReport()))
    except MedlinkError as error:
        assert str(error)
    else:
        assert all(record.nct_id for record in records)


@FUZZ
@given(note=st.one_of(ANY_TEXT, MEDICAL_ISH, st.text(max_size=3000)))
def test_any_note_is_read_or_refused_clearly(note: str) -> None:
    from medlink.trials.matching.notes import check_demographics, read_note

    try:
        read = read_note(note)
    except MedlinkError as error:
        assert "empty" in str(error)
        assert not note.strip()
    else:
        assert read.age is None or read.age >= 0
        check_demographics(read, 18, 65, "female")


@FUZZ
@given(
    arguments=st.lists(
        st.one_of(
            MEDICAL_ISH,
            st.sampled_from(
                [
                    "--format",
                    "json",
                    "tsv",
                    "--exact-only",
                    "--input",
                    "--output",
                    "-",
                    "--sieves",
                    "exact,zz",
                    "--nil-threshold",
                    "x",
                    "--top",
                    "-1",
                ]
            ),
        ),
        max_size=6,
    )
)
def test_any_link_command_line_exits_without_a_traceback(arguments: list[str]) -> None:
    arguments = [a.replace("\x00", "") for a in arguments]  # no shell can pass a NUL byte in an argument
    previous = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:  # --output may name anything: let it land in a throwaway folder
        os.chdir(folder)
        try:
            result = CliRunner().invoke(main, ["link", "--exact-only", *arguments])
        finally:
            os.chdir(previous)
    assert result.exit_code in (0, 1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


@FUZZ
@given(
    members=st.lists(
        st.tuples(
            st.sampled_from(["NCT1.xml", "NCT2.json", "dump.jsonl", "x/NCT3.xml"]),
            st.one_of(
                st.binary(max_size=2_000),
                st.integers(1, 3_000_000).map(lambda n: b"<a>" + b" " * n),
                st.lists(JSON_PARTS, max_size=12).map(lambda p: "".join(p).encode()),
            ),
        ),
        max_size=4,
    ),
    suffix=st.sampled_from([".zip", ".tar.gz", ".tar"]),
)
def test_any_archive_reads_or_fails_clearly(
    members: list[tuple[str, bytes]], suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Archives of random members, some a compressed megabyte of nothing: read within the limits (lowered here, so a
    few megabytes stand for a bomb), or refused clearly."""
    from medlink.terminology import ReadReport
    from medlink.trials import readers
    from support import write_archive

    monkeypatch.setattr(readers, "MAX_RECORD_BYTES", 1_000_000)
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 100_000)
    folder = Path(tempfile.mkdtemp(prefix="medlink-fuzz-"))
    archive = write_archive(folder / f"records{suffix}", dict(members))
    try:
        records = list(readers.read_trials([archive], ReadReport()))
    except MedlinkError as error:
        assert str(error)
    else:
        assert all(record.nct_id for record in records)
