"""Clinical trial records read: legacy XML, API v2 JSON, archives and folders, ages, criteria."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from medlink.errors import MedlinkError
from medlink.terminology import ReadReport, SourceError
from medlink.trials.criteria import split_criteria
from medlink.trials.readers import parse_age, read_trials
from support import TRIALS, XML_RECORDS, shared_file, write_archive


def test_legacy_xml_record_fields() -> None:
    record = next(iter(read_trials([XML_RECORDS[0]])))
    assert record.nct_id == "NCT90000001"
    assert record.title.startswith("A Randomized Trial of Nifedipine")
    assert record.conditions == ("CAH", "Kidney Transplantation")
    assert record.keywords == ("adrenal",)
    assert [i.name for i in record.interventions][:2] == ["Nifedipine 30 mg oral tablet", "Matching placebo tablet"]
    assert record.interventions[0].other_names == ("Procardia XL",)
    assert record.inclusion == (
        "diagnosed with Congenital Adrenal Hyperplasia (CAH), confirmed by genetic testing",
        "normal ECG during baseline evaluation",
    )
    assert record.exclusion == ("history of liver disease", "pregnancy")
    assert (record.minimum_age, record.maximum_age, record.sex) == (0.5, 35.0, "female")
    assert record.healthy_volunteers is False
    assert record.condition_browse[0] == "Adrenal Hyperplasia, Congenital"
    assert record.intervention_browse == ("Nifedipine", "Cisplatin", "Paclitaxel")


def test_api_v2_study_fields() -> None:
    record = next(iter(read_trials([TRIALS / "api_v2_study.json"])))
    assert record.nct_id == "NCT90000003"
    assert record.conditions == ("Type 2 Diabetes Mellitus", "Obesity")
    assert [(i.type, i.name) for i in record.interventions][2:] == [
        ("Behavioral", "Exercise"),
        ("Dietary Supplement", "Vitamin D3 2000 IU daily"),
    ]
    assert record.interventions[0].other_names == ("Glucophage",)
    assert record.inclusion == ("Adults with type 2 diabetes", "HbA1c 7-10%")
    assert record.exclusion == ("Type 1 diabetes", "Renal failure")
    assert (record.minimum_age, record.maximum_age, record.sex) == (18.0, 75.0, "all")
    assert record.condition_browse == ("Diabetes Mellitus, Type 2", "Obesity")
    assert record.intervention_browse == ("Metformin",)


def test_api_v2_page_and_json_lines(tmp_path: Path) -> None:
    study = json.loads((TRIALS / "api_v2_study.json").read_text())
    second = json.loads(json.dumps(study))
    second["protocolSection"]["identificationModule"]["nctId"] = "NCT90000004"
    (tmp_path / "page.json").write_text(json.dumps({"studies": [study, second], "nextPageToken": "x"}))
    (tmp_path / "dump.jsonl").write_text(json.dumps(study) + "\n\n" + json.dumps(second) + "\n")
    assert [r.nct_id for r in read_trials([tmp_path / "page.json"])] == ["NCT90000003", "NCT90000004"]
    assert [r.nct_id for r in read_trials([tmp_path / "dump.jsonl"])] == ["NCT90000003", "NCT90000004"]


@pytest.mark.parametrize("name", ["records.zip", "records.tar.gz"])
def test_archives_and_folders_read_the_same_records(tmp_path: Path, name: str) -> None:
    members = {f"ctgov/{p.name}": p.read_bytes() for p in [*XML_RECORDS, TRIALS / "api_v2_study.json"]}
    archive = write_archive(tmp_path / name, members)
    from_archive = list(read_trials([archive]))
    from_folder = list(read_trials([TRIALS]))
    assert [r.nct_id for r in from_archive] == ["NCT90000001", "NCT90000002", "NCT90000003"]
    assert sorted(from_archive, key=lambda r: r.nct_id) == sorted(from_folder, key=lambda r: r.nct_id)


def test_malformed_record_is_reported_with_its_member_and_skipped(tmp_path: Path) -> None:
    good = XML_RECORDS[0].read_bytes()
    archive = write_archive(tmp_path / "bad.tar.gz", {"a/NCT1.xml": good[: len(good) // 2], "a/NCT2.xml": good})
    report = ReadReport()
    assert [r.nct_id for r in read_trials([archive], report)] == ["NCT90000001"]
    assert report.counts["malformed records skipped"] == 1
    assert f"{archive}:a/NCT1.xml" in report.examples["malformed records skipped"][0]
    with pytest.raises(SourceError, match=r"bad\.tar\.gz:a/NCT1\.xml"):
        list(read_trials([archive], ReadReport(strict=True)))


def test_empty_and_truncated_archives_are_clear_errors(tmp_path: Path) -> None:
    empty = write_archive(tmp_path / "empty.zip", {})
    with pytest.raises(MedlinkError, match=r"no ClinicalTrials\.gov record found"):
        list(read_trials([empty]))
    whole = write_archive(tmp_path / "whole.tar.gz", {"NCT1.xml": XML_RECORDS[0].read_bytes() * 50})
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(SourceError, match="truncated"):
        list(read_trials([truncated]))


def test_ages() -> None:
    assert parse_age("18 Years") == 18.0
    assert parse_age("6 Months") == 0.5
    assert parse_age("N/A") is None
    assert parse_age("") is None


def test_criteria_variants() -> None:
    inclusion, exclusion = split_criteria(
        "Patients must have:\n  - a\n  - b\nPatients are not eligible if they:\n  - c\n      wrapped\n"
    )
    assert (inclusion, exclusion) == (("a", "b"), ("c wrapped",))
    inclusion, exclusion = split_criteria("- Inclusion Criteria:\n1) x\n2) y\n- Exclusion Criteria:\n* z")
    assert (inclusion, exclusion) == (("x", "y"), ("z",))
    assert split_criteria("") == ((), ())


def test_reads_the_shared_sample_of_clinicaltrials_gov() -> None:
    archive = shared_file("trials/ctgov-sample/ctgov_records.tar.gz")
    report = ReadReport()
    records = list(read_trials([archive], report))
    assert len(records) == 5097 and not report.counts
    assert sum(1 for r in records if r.exclusion) > 1900
    assert all(r.nct_id.startswith("NCT") for r in records)


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        (("protocolSection", "identificationModule", "officialTitle"), 5, "officialTitle: expected text, got int"),
        (("protocolSection", "conditionsModule", "conditions"), "Diabetes", "conditions: expected a list"),
        (("protocolSection", "conditionsModule", "conditions"), ["Diabetes", 7], "conditions[1]: expected text"),
        (("protocolSection", "eligibilityModule"), [], "eligibilityModule: expected an object"),
        (("protocolSection", "eligibilityModule", "healthyVolunteers"), "yes", "healthyVolunteers: expected true"),
        (("derivedSection", "conditionBrowseModule", "meshes"), [{"term": 3}], "meshes[0].term: expected text"),
    ],
)
def test_an_api_v2_field_of_the_wrong_type_is_named(path: tuple[str, ...], value: object, says: str) -> None:
    from medlink.trials.readers import parse_api_study

    study = json.loads((TRIALS / "api_v2_study.json").read_text())
    parent = study
    for key in path[:-1]:
        parent = parent.setdefault(key, {})
    parent[path[-1]] = value
    with pytest.raises(ValueError, match=re.escape(says)):
        parse_api_study(study)


def test_an_oversized_member_or_line_is_skipped_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from medlink.trials import readers

    monkeypatch.setattr(readers, "MAX_RECORD_BYTES", 20_000)
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 5_000)
    record = XML_RECORDS[0].read_bytes()
    bomb = b"<clinical_study>" + b" " * 5_000_000 + b"</clinical_study>"  # compresses to a few KB
    archive = write_archive(tmp_path / "bomb.tar.gz", {"a/NCT1.xml": bomb, "a/NCT2.xml": record})
    report = ReadReport()
    assert [r.nct_id for r in read_trials([archive], report)] == ["NCT90000001"]
    assert "over 20,000 bytes, not read" in " ".join(report.lines())
    study = (TRIALS / "api_v2_study.json").read_text()
    dump = tmp_path / "dump.jsonl"
    dump.write_text(json.dumps({"padding": "x" * 10_000}) + "\n" + json.dumps(json.loads(study)) + "\n")
    report = ReadReport()
    assert [r.nct_id for r in read_trials([dump], report)] == ["NCT90000003"]
    assert "a line over 5,000 bytes, not read" in " ".join(report.lines())
