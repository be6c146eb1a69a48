"""Clinical trial records: readers, criteria, intervention strings, branch scopes, normalization, resumable
output, the browse-term evaluation and the ``medlink trials`` commands."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from medlink.cli import main
from medlink.errors import MedlinkError
from medlink.linking import Linker, LinkerConfig
from medlink.linking.mentions.branches import BranchScope
from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.linking.sieves.exact import ExactSieve
from medlink.terminology import ReadReport, SourceError, load_default_terminology
from medlink.trials import TrialRecord
from medlink.trials.criteria import split_criteria
from medlink.trials.normalization.browse_terms import BrowseScorer, split_of
from medlink.trials.normalization.interventions import (
    PLACEBO,
    STANDARD_OF_CARE,
    clean_intervention,
    prepare_intervention,
)
from medlink.trials.normalization.normalizer import NilThresholds, TrialNormalizer
from medlink.trials.normalization.output import ResumableWriter, read_rows
from medlink.trials.readers import parse_age, read_trials
from medlink.trials.records import Intervention
from support import FIXTURES, shared_file

TRIALS = FIXTURES / "trials"
XML_RECORDS = [TRIALS / "NCT90000001.xml", TRIALS / "NCT90000002.xml"]


@pytest.fixture(scope="module")
def mesh():
    return load_default_terminology()


@pytest.fixture(scope="module")
def normalizer(mesh) -> TrialNormalizer:
    linker = Linker(mesh)  # exact match over the embedded MeSH descriptors: real data, no encoder
    return TrialNormalizer(linker, linker)


# --- readers ------------------------------------------------------------------------------------------------------


def test_legacy_xml_record_fields() -> None:
    record = next(iter(read_trials([XML_RECORDS[0]])))
    assert record.nct_id == "NCT90000001"
    assert record.title.startswith("A Randomized Trial of Nifedipine")
    assert record.conditions == ("CAH", "Kidney Transplantation")
    assert record.keywords == ("adrenal",)
    assert [i.name for i in record.interventions][:2] == ["Nifedipine 30 mg oral tablet", "Matching placebo tablet"]
    assert record.interventions[0].other_names == ("Procardia XL",)
    assert record.inclusion == ("diagnosed with Congenital Adrenal Hyperplasia (CAH), confirmed by genetic testing",
                                "normal ECG during baseline evaluation")
    assert record.exclusion == ("history of liver disease", "pregnancy")
    assert (record.minimum_age, record.maximum_age, record.sex) == (0.5, 35.0, "female")
    assert record.healthy_volunteers is False
    assert record.condition_browse[0] == "Adrenal Hyperplasia, Congenital"
    assert record.intervention_browse == ("Nifedipine", "Cisplatin", "Paclitaxel")


def test_api_v2_study_fields() -> None:
    record = next(iter(read_trials([TRIALS / "api_v2_study.json"])))
    assert record.nct_id == "NCT90000003"
    assert record.conditions == ("Type 2 Diabetes Mellitus", "Obesity")
    assert [(i.type, i.name) for i in record.interventions][2:] == [("Behavioral", "Exercise"),
                                                                   ("Dietary Supplement", "Vitamin D3 2000 IU daily")]
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


def _archive(path: Path, members: dict[str, bytes]) -> Path:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in members.items():
                archive.writestr(name, data)
    else:
        with tarfile.open(path, "w:gz") as archive:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("name", ["records.zip", "records.tar.gz"])
def test_archives_and_folders_read_the_same_records(tmp_path: Path, name: str) -> None:
    members = {f"ctgov/{p.name}": p.read_bytes() for p in [*XML_RECORDS, TRIALS / "api_v2_study.json"]}
    archive = _archive(tmp_path / name, members)
    from_archive = list(read_trials([archive]))
    from_folder = list(read_trials([TRIALS]))
    assert [r.nct_id for r in from_archive] == ["NCT90000001", "NCT90000002", "NCT90000003"]
    assert sorted(from_archive, key=lambda r: r.nct_id) == sorted(from_folder, key=lambda r: r.nct_id)


def test_malformed_record_is_reported_with_its_member_and_skipped(tmp_path: Path) -> None:
    good = XML_RECORDS[0].read_bytes()
    archive = _archive(tmp_path / "bad.tar.gz", {"a/NCT1.xml": good[: len(good) // 2], "a/NCT2.xml": good})
    report = ReadReport()
    assert [r.nct_id for r in read_trials([archive], report)] == ["NCT90000001"]
    assert report.counts["malformed records skipped"] == 1
    assert f"{archive}:a/NCT1.xml" in report.examples["malformed records skipped"][0]
    with pytest.raises(SourceError, match=r"bad\.tar\.gz:a/NCT1\.xml"):
        list(read_trials([archive], ReadReport(strict=True)))


def test_empty_and_truncated_archives_are_clear_errors(tmp_path: Path) -> None:
    empty = _archive(tmp_path / "empty.zip", {})
    with pytest.raises(MedlinkError, match=r"no ClinicalTrials\.gov record found"):
        list(read_trials([empty]))
    whole = _archive(tmp_path / "whole.tar.gz", {"NCT1.xml": XML_RECORDS[0].read_bytes() * 50})
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
    inclusion, exclusion = split_criteria("Patients must have:\n  - a\n  - b\nPatients are not eligible if they:\n"
                                          "  - c\n      wrapped\n")  # fmt: skip
    assert (inclusion, exclusion) == (("a", "b"), ("c wrapped",))
    inclusion, exclusion = split_criteria("- Inclusion Criteria:\n1) x\n2) y\n- Exclusion Criteria:\n* z")
    assert (inclusion, exclusion) == (("x", "y"), ("z",))
    assert split_criteria("") == ((), ())


# --- intervention strings -----------------------------------------------------------------------------------------


def test_intervention_strings_are_cleaned_split_and_nil_classed() -> None:
    assert clean_intervention("Ibuprofen 600 mg oral tablet") == "Ibuprofen"
    assert clean_intervention("Vitamin D3 2000 IU daily") == "Vitamin D3"
    assert prepare_intervention("irinotecan hydrochloride").parts == (("irinotecan hydrochloride", "irinotecan"),)
    assert prepare_intervention("estramustine phosphate sodium").parts[0][-1] == "estramustine"
    assert prepare_intervention("Perphenazine [Trilafon]").parts == (("Perphenazine", "Trilafon"),)
    assert prepare_intervention("ribociclib + capecitabine").parts == (("ribociclib",), ("capecitabine",))
    assert prepare_intervention("Lopinavir/ritonavir").parts == (("Lopinavir",), ("ritonavir",))
    assert prepare_intervention("Nitrous oxide 40% and placebo").parts == (("Nitrous oxide",),)
    assert prepare_intervention("Matched Placebo Tablet").nil_class == PLACEBO
    assert prepare_intervention("sham procedure").nil_class == PLACEBO
    assert prepare_intervention("Standard of care").nil_class == STANDARD_OF_CARE
    assert prepare_intervention("Usual care").nil_class == STANDARD_OF_CARE
    assert prepare_intervention("Hand and foot care", split=False).parts == (("Hand and foot care",),)


# --- branch scopes ------------------------------------------------------------------------------------------------


def test_branch_scope_keeps_in_scope_candidates_or_says_nil(mesh) -> None:
    diseases = BranchScope(mesh, ("C", "F03"))
    kidney_transplant = mesh.lookup("Kidney Transplantation")[0].concept_id
    hypertension = mesh.lookup("Hypertension")[0].concept_id
    assert diseases.allows(hypertension) and not diseases.allows(kidney_transplant)
    result = LinkResult("kidney tx", (kidney_transplant,), Stage.DENSE, 0.9, "Kidney Transplantation",
                        candidates=(Candidate(kidney_transplant, "Kidney Transplantation", 0.9),
                                    Candidate(hypertension, "Hypertension", 0.7)))  # fmt: skip
    restricted = diseases.restrict(result)
    assert restricted.concepts == (hypertension,) and restricted.score == 0.7
    alone = diseases.restrict(LinkResult("kidney tx", (kidney_transplant,), Stage.EXACT, 1.0))
    assert alone.stage is Stage.NIL and "branches C,F03" in alone.reason


# --- normalization ------------------------------------------------------------------------------------------------


def test_normalizer_links_conditions_and_interventions(normalizer, mesh) -> None:
    records = list(read_trials([XML_RECORDS[0], TRIALS / "api_v2_study.json"]))
    first, second = normalizer.normalize_batch(records)
    cah, transplant = first.conditions
    assert mesh.concept_preferred_name(cah.concepts[0]) == "Adrenal Hyperplasia, Congenital"  # CAH from the summary
    assert transplant.concepts == () and transplant.stage == "nil"  # not a disease
    nifedipine, placebo, combination, care = first.interventions
    assert nifedipine.names == ("Nifedipine",) and nifedipine.type == "Drug"
    assert (placebo.concepts, placebo.nil_class) == ((), "placebo")
    assert combination.names == ("Cisplatin", "Paclitaxel") and combination.stage == "composite"
    assert care.nil_class == "standard-of-care"
    metformin, placebo, exercise, vitamin = second.interventions
    assert vitamin.type == "Dietary Supplement" and placebo.nil_class == "placebo"
    assert metformin.names == ("Metformin",)  # strength, form and salt removed
    assert exercise.names == ("Exercise",)  # other types link to any MeSH branch
    row = second.to_dict()
    assert set(row) == {"nct_id", "conditions", "interventions"}
    assert set(row["conditions"][0]) == {"text", "concepts", "names", "score", "stage"}
    assert set(row["interventions"][0]) == {"text", "type", "concepts", "names", "score", "stage", "nil_class"}


def test_a_condition_is_refined_by_the_narrower_concepts_its_title_or_summary_names(mesh) -> None:
    linker = Linker(mesh)
    record = TrialRecord("NCT90000009", title="Cladribine in Hairy Cell Leukemia",
                         brief_summary="Patients with leukemia, not with asthma, are treated.",
                         conditions=("Leukemia", "Neoplasms"))  # fmt: skip
    leukemia, neoplasms = TrialNormalizer(linker, linker).normalize_batch([record])[0].conditions
    assert leukemia.names == ("Leukemia", "Leukemia, Hairy Cell") and leukemia.stage == "refined"
    # the most specific narrower concept only ("Leukemia" in the summary is above it); negated "asthma" is no
    # disease of the trial, and not narrower anyway
    assert neoplasms.names == ("Neoplasms", "Leukemia, Hairy Cell")
    plain = TrialNormalizer(linker, linker, refine=False).normalize_batch([record])[0].conditions[0]
    assert plain.names == ("Leukemia",) and plain.stage == "exact"


def test_a_behavioural_symptom_is_a_condition_only_when_written_as_its_name(mesh) -> None:
    """"Depression" is MeSH's Behavioral Symptoms [F01.145.126], outside Diseases and Mental Disorders: written as
    its name it links there (it was nil), but retrieval that lands there from a disorder keeps the disorder."""
    from medlink.trials.normalization.normalizer import FieldBranches

    depression = mesh.lookup("Depression")[0].concept_id
    disorder = mesh.lookup("Depressive Disorder, Major")[0].concept_id

    class Retrieval:  # a dense sieve whose best name is the symptom, the disorder second
        stage, name = Stage.DENSE, "dense"

        def link_batch(self, items):
            return [LinkResult(text, (depression,), Stage.DENSE, 0.9, "Depression",
                               candidates=(Candidate(depression, "Depression", 0.9),
                                           Candidate(disorder, "Depressive Disorder, Major", 0.85)))
                    for text, _ in items]  # fmt: skip

    linker = Linker(mesh, sieves=[ExactSieve(mesh), Retrieval()])
    record = TrialRecord("NCT90000014", conditions=("Depression", "Major Depression", "Suicide, Attempted"))
    written, retrieved, attempted = TrialNormalizer(linker, linker).normalize_batch([record])[0].conditions
    assert written.names == ("Depression",) and written.stage == "exact"
    assert attempted.names == ("Suicide, Attempted",)
    assert retrieved.names == ("Depressive Disorder, Major",) and retrieved.stage == "dense"
    narrow = TrialNormalizer(linker, linker, branches=FieldBranches(condition_when_named=()))
    assert narrow.normalize_batch([record])[0].conditions[0].stage == "nil"  # diseases and mental disorders only


def test_staging_and_course_qualifiers_give_a_second_spelling() -> None:
    from medlink.trials.normalization.conditions import condition_spellings

    assert condition_spellings("Stage IIIB Breast Cancer") == ("Stage IIIB Breast Cancer", "Breast Cancer")
    assert condition_spellings("Recurrent Adult Grade 2 Follicular Lymphoma")[1] == "Follicular Lymphoma"
    assert condition_spellings("Stage II and III Colon Cancer")[1] == "Colon Cancer"
    assert condition_spellings("Unspecified Adult Solid Tumor, Protocol Specific")[1] == "Solid Tumor"
    # carcinoma in situ and metastasis are concepts of their own; a qualifier alone is left as written
    for kept in ("Stage 0 Cervical Cancer", "Metastatic Cancer", "Recurrent", "Stage IV", "Adult"):
        assert condition_spellings(kept) == (kept,)


def test_a_condition_without_its_qualifiers_is_linked_unless_the_written_one_matches(mesh) -> None:
    linker = Linker(mesh)
    record = TrialRecord("NCT90000013", conditions=("Stage IIIB Breast Neoplasms", "Refractory Anemia",
                                                    "Recurrent Adult Hodgkin Disease"))  # fmt: skip
    staged, refractory, recurrent = TrialNormalizer(linker, linker).normalize_batch([record])[0].conditions
    assert staged.names == ("Breast Neoplasms",) and staged.stage == "exact"
    assert recurrent.names == ("Hodgkin Disease",) and recurrent.reason.startswith("as 'Hodgkin Disease': ")
    assert refractory.names == ("Anemia, Refractory",)  # the written string is a MeSH name: it wins
    plain = TrialNormalizer(linker, linker, qualifiers=False).normalize_batch([record])[0].conditions
    assert [c.concepts for c in plain] == [(), refractory.concepts, ()]


@pytest.mark.slow
def test_the_drug_default_links_supplementary_records_under_their_descriptors(mesh) -> None:
    from medlink.linking.recipe import DRUGS, LinkerRecipe

    drugs = Linker.from_recipe(LinkerRecipe(exact_only=True, embedded=DRUGS))  # compiled into the cache on first use
    record = TrialRecord("NCT90000010", interventions=(Intervention("Drug", "Fludarabine phosphate 25 mg/m2 IV"),
                                                       Intervention("Biological", "sevirumab")))  # fmt: skip
    fludarabine, sevirumab = TrialNormalizer(Linker(mesh), drugs).normalize_batch([record])[0].interventions
    assert fludarabine.names == ("fludarabine phosphate",) and fludarabine.concepts[0].startswith("MESH:C")
    assert sevirumab.names == ("sevirumab",)  # a supplementary record, in scope through "Antibodies, Monoclonal"
    descriptors_only = TrialNormalizer(Linker(mesh), Linker(mesh)).normalize_batch([record])[0].interventions
    assert descriptors_only[1].concepts == ()  # the descriptors alone do not know it


def test_a_service_normalizer_links_drugs_with_its_own_linker_unless_it_holds_the_embedded_default(mesh) -> None:
    from medlink.trials.normalization.normalizer_spec import normalizer_around

    own = Linker(mesh, config=LinkerConfig(nil_threshold=0.7, shorthand=False))  # a linker of the user's own
    normalizer = normalizer_around(own)  # drugs too go through it
    assert normalizer.interventions is normalizer.conditions and normalizer.conditions.terminology is mesh
    assert normalizer.conditions.config.nil_threshold == 0  # the normalizer's own per-field thresholds decide
    assert normalizer.conditions.config.shorthand is False  # the rest of the service's settings stay


@pytest.mark.slow
def test_a_service_on_the_exact_only_default_links_drugs_exactly_through_the_drug_default() -> None:
    from medlink.trials.normalization.normalizer_spec import normalizer_around

    service = Linker.load(exact_only=True)  # `medlink serve --exact-only --no-shorthand --no-respell`
    service = service.with_config(replace(service.config, shorthand=False, respell=False))
    normalizer = normalizer_around(service)
    assert len(normalizer.interventions.terminology) > 300_000  # descriptors + supplementary records
    assert not normalizer.interventions.config.shorthand and not normalizer.interventions.config.respell
    record = TrialRecord("NCT90000011", interventions=(Intervention("Biological", "sevirumab"),))
    [sevirumab] = normalizer.normalize_batch([record])[0].interventions
    assert sevirumab.names == ("sevirumab",) and sevirumab.stage == "exact"


def test_normalizer_spec_carries_the_respelling_and_shorthand_choices() -> None:
    from medlink.linking.recipe import LinkerRecipe
    from medlink.trials.normalization.normalizer_spec import NormalizerSpec

    record = TrialRecord("NCT90000012", conditions=("Haemophilia A", "Parkinson's", "T2DM"))
    on = NormalizerSpec(LinkerRecipe(exact_only=True), None).build(progress=False)
    assert [c.names for c in on.normalize_batch([record])[0].conditions] == [
        ("Hemophilia A",), ("Parkinson Disease",), ("Diabetes Mellitus, Type 2",)]  # fmt: skip
    off = NormalizerSpec(LinkerRecipe(exact_only=True), None, shorthand=False, respell=False).build(progress=False)
    assert [c.concepts for c in off.normalize_batch([record])[0].conditions] == [(), (), ()]
    as_written = NormalizerSpec(LinkerRecipe(exact_only=True), None, qualifiers=False).build(progress=False)
    assert as_written.qualifiers is False
    result = CliRunner().invoke(main, ["trials", "eval-normalization", str(TRIALS), "--exact-only", "--no-respell",
                                       "--no-shorthand", "--no-qualifiers", "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output


def test_embedded_defaults_are_checked() -> None:
    from medlink.linking.recipe import DRUGS, LinkerRecipe

    with pytest.raises(MedlinkError, match="embedded must be one of"):
        LinkerRecipe(embedded="chemicals")
    with pytest.raises(MedlinkError, match="has its own terminology and index"):
        LinkerRecipe(Path("my-index"), embedded=DRUGS)


def test_retrieval_below_a_field_threshold_is_nil(encoder, tmp_path: Path) -> None:
    from medlink.index import build_index, ontology_entries
    from medlink.linking.linker import dense_linker
    from medlink.terminology import Concept, Name, NameKind, Terminology

    def concept(cid: str, name: str, tree: str) -> Concept:
        return Concept(id=cid, preferred_name=name, names=(Name(name, NameKind.PREFERRED),), tree_numbers=(tree,))

    terminology = Terminology.from_concepts([concept("MESH:D1", "Hypertension", "C14.907"),
                                             concept("MESH:D2", "Ibuprofen", "D02.455"),
                                             concept("MESH:D3", "Asthma", "C08.127")])  # fmt: skip
    folder = build_index(ontology_entries(terminology), encoder, tmp_path / "index", terminology.fingerprint())
    from medlink.index import VectorIndex
    from medlink.linking import LinkerConfig

    linker = dense_linker(terminology, VectorIndex.load(folder), encoder, config=LinkerConfig())
    record = TrialRecord("NCT1", conditions=("high blood pressure", "elevated blood pressure"))
    lenient = TrialNormalizer(linker, linker, NilThresholds(0.0, 0.0, 0.0)).normalize_batch([record])[0]
    assert [c.names for c in lenient.conditions] == [("Hypertension",), ("Hypertension",)]
    score = lenient.conditions[0].score
    strict = TrialNormalizer(linker, linker, NilThresholds(score + 0.01, 0.0, 0.0)).normalize_batch([record])[0]
    assert strict.conditions[0].stage == "nil" and "condition nil threshold" in strict.conditions[0].reason


# --- output -------------------------------------------------------------------------------------------------------


def test_writer_resumes_after_a_kill_without_loss_or_duplicates(normalizer, tmp_path: Path) -> None:
    records = list(read_trials([TRIALS]))
    trials = normalizer.normalize_batch(records)
    output = tmp_path / "out.jsonl"
    with ResumableWriter(output) as writer:
        writer.write(trials[:2])
    # a kill in the middle of the third row leaves half a line in the checkpoint and no output
    checkpoint = output.with_name(".out.jsonl.partial.jsonl")
    with checkpoint.open("a") as handle:
        handle.write(json.dumps(trials[2].to_dict())[:40])
    assert not output.exists()
    with ResumableWriter(output) as writer:
        assert writer.done == {trials[0].nct_id, trials[1].nct_id}
        assert writer.write(trials) == 1  # the two done ones are skipped
        writer.finish()
    rows = read_rows(output)
    assert [r["nct_id"] for r in rows] == [t.nct_id for t in trials]
    assert not checkpoint.exists()


def test_parquet_output_and_a_finished_output_is_never_rewritten_in_place(normalizer, tmp_path: Path) -> None:
    trials = normalizer.normalize_batch(list(read_trials([TRIALS])))
    output = tmp_path / "out.parquet"
    with ResumableWriter(output) as writer:
        writer.write(trials[:1])
        writer.finish()
    before = output.read_bytes()
    with ResumableWriter(output) as writer:
        assert output.read_bytes() == before  # resuming copies it; the output itself waits for the rename
        writer.write(trials)
        writer.finish()
    rows = read_rows(output)
    assert [r["nct_id"] for r in rows] == [t.nct_id for t in trials]
    assert rows[0]["interventions"][1]["nil_class"] == "placebo"


# --- evaluation ---------------------------------------------------------------------------------------------------


def test_browse_scoring_counts_ancestors_both_ways(normalizer, mesh) -> None:
    records = list(read_trials([XML_RECORDS[0]]))
    evaluation = BrowseScorer(mesh).score(zip(records, normalizer.normalize_batch(records), strict=True))
    # Adrenal Hyperplasia, Congenital is predicted and Adrenogenital Syndrome is its ancestor; NLM's "Hyperplasia"
    # is no tree ancestor of it (its algorithm matched the word), so it stays missed
    assert evaluation.conditions.to_dict()["precision"] == 1.0
    assert (evaluation.conditions.found, evaluation.conditions.gold) == (2, 3)
    assert (evaluation.interventions.correct, evaluation.interventions.predicted) == (3, 3)
    assert evaluation.by_type["Drug"].precision == 1.0


def test_splits_are_stable() -> None:
    assert {split_of(f"NCT{n:08d}") for n in range(50)} == {"train", "test"}
    assert split_of("NCT00000102") == split_of("NCT00000102")


# --- the commands -------------------------------------------------------------------------------------------------


def test_normalize_command_writes_resumes_and_runs_workers(tmp_path: Path) -> None:
    runner = CliRunner()
    output = tmp_path / "out.jsonl"
    result = runner.invoke(main, ["trials", "normalize", str(TRIALS), "-o", str(output), "--exact-only"])
    assert result.exit_code == 0, result.output
    assert "3 records normalized" in result.output and "records/s once the linkers were ready" in result.output
    rows = read_rows(output)
    assert [r["nct_id"] for r in rows] == ["NCT90000001", "NCT90000002", "NCT90000003"]
    again = runner.invoke(main, ["trials", "normalize", str(TRIALS), "-o", str(output), "--exact-only"])
    assert "0 records normalized" in again.output and "(none new); 3 already done" in again.output
    assert read_rows(output) == rows
    parallel = tmp_path / "parallel.parquet"
    result = runner.invoke(main, ["trials", "normalize", str(TRIALS), "-o", str(parallel), "--exact-only",
                                  "--workers", "2", "--batch-records", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert read_rows(parallel) == rows


def test_commands_refuse_bad_input_clearly(tmp_path: Path) -> None:
    runner = CliRunner()
    bad_output = runner.invoke(main, ["trials", "normalize", str(TRIALS), "-o", str(tmp_path / "out.csv")])
    assert bad_output.exit_code != 0 and ".jsonl or .parquet" in bad_output.output
    empty = _archive(tmp_path / "empty.zip", {})
    result = runner.invoke(main, ["trials", "normalize", str(empty), "-o", str(tmp_path / "o.jsonl"), "--exact-only"])
    assert result.exit_code != 0 and "no ClinicalTrials.gov record" in result.output
    assert not (tmp_path / "o.jsonl").exists()


def test_eval_normalization_command(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["trials", "eval-normalization", str(TRIALS), "--exact-only", "--format", "json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["records"] == 3
    assert 0.0 < scores["conditions"]["f1"] <= 1.0 and scores["interventions"]["predicted"] > 0


def test_reads_the_shared_sample_of_clinicaltrials_gov() -> None:
    archive = shared_file("trials/ctgov-sample/ctgov_records.tar.gz")
    report = ReadReport()
    records = list(read_trials([archive], report))
    assert len(records) == 5097 and not report.counts
    assert sum(1 for r in records if r.exclusion) > 1900
    assert all(r.nct_id.startswith("NCT") for r in records)


def test_normalizer_linkers_leave_nil_to_the_field_thresholds(encoder, fixtures: Path, tmp_path: Path) -> None:
    """An index's own calibrated threshold would stack on the per-field ones: the normalizer's linkers run without."""
    from medlink.index import build_index, ontology_entries
    from medlink.index.build import update_manifest
    from medlink.linking.recipe import LinkerRecipe
    from medlink.terminology import SourceSpec, compile_terminology, save_terminology
    from medlink.trials.normalization.normalizer_spec import NormalizerSpec

    terminology = compile_terminology([SourceSpec.parse(f"mesh-desc-tsv:{fixtures / 'mesh_descriptors_tiny.tsv'}")])
    save_terminology(terminology, tmp_path / "term")
    index = build_index(ontology_entries(terminology), encoder, tmp_path / "index", terminology.fingerprint(),
                        origin={"encoder": "minilm"})  # fmt: skip
    update_manifest(index, nil_threshold=0.99)
    built = NormalizerSpec(LinkerRecipe(index, tmp_path / "term"), None).build(progress=False)
    assert built.conditions.config.nil_threshold == 0 and not built.conditions.config.declares_nil
