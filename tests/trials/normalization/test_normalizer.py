"""Trial records normalized: conditions refined and respelled, drugs by the drug default, nil per field."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from medlink.cli import main
from medlink.errors import MedlinkError
from medlink.linking import Linker, LinkerConfig
from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.linking.sieves.exact import ExactSieve
from medlink.trials import TrialRecord
from medlink.trials.normalization.normalizer import NilThresholds, TrialNormalizer
from medlink.trials.readers import read_trials
from medlink.trials.records import Intervention
from support import TRIALS, XML_RECORDS


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
    record = TrialRecord(
        "NCT90000009",
        title="Cladribine in Hairy Cell Leukemia",
        brief_summary="Patients with leukemia, not with asthma, are treated.",
        conditions=("Leukemia", "Neoplasms"),
    )
    leukemia, neoplasms = TrialNormalizer(linker, linker).normalize_batch([record])[0].conditions
    assert leukemia.names == ("Leukemia", "Leukemia, Hairy Cell") and leukemia.stage == "refined"
    # the most specific narrower concept only ("Leukemia" in the summary is above it); negated "asthma" is no
    # disease of the trial, and not narrower anyway
    assert neoplasms.names == ("Neoplasms", "Leukemia, Hairy Cell")
    plain = TrialNormalizer(linker, linker, refine=False).normalize_batch([record])[0].conditions[0]
    assert plain.names == ("Leukemia",) and plain.stage == "exact"


def test_a_behavioural_symptom_is_a_condition_only_when_written_as_its_name(mesh) -> None:
    """ "Depression" is MeSH's Behavioral Symptoms [F01.145.126], outside Diseases and Mental Disorders: written as
    its name it links there (it was nil), but retrieval that lands there from a disorder keeps the disorder."""
    from medlink.trials.normalization.normalizer import FieldBranches

    depression = mesh.lookup("Depression")[0].concept_id
    disorder = mesh.lookup("Depressive Disorder, Major")[0].concept_id

    class Retrieval:  # a dense sieve whose best name is the symptom, the disorder second
        stage, name = Stage.DENSE, "dense"

        def link_batch(self, items):
            return [
                LinkResult(
                    text,
                    (depression,),
                    Stage.DENSE,
                    0.9,
                    "Depression",
                    candidates=(
                        Candidate(depression, "Depression", 0.9),
                        Candidate(disorder, "Depressive Disorder, Major", 0.85),
                    ),
                )
                for text, _ in items
            ]

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
    record = TrialRecord(
        "NCT90000013",
        conditions=("Stage IIIB Breast Neoplasms", "Refractory Anemia", "Recurrent Adult Hodgkin Disease"),
    )
    staged, refractory, recurrent = TrialNormalizer(linker, linker).normalize_batch([record])[0].conditions
    assert staged.names == ("Breast Neoplasms",) and staged.stage == "exact"
    assert recurrent.names == ("Hodgkin Disease",) and recurrent.reason.startswith("as 'Hodgkin Disease': ")
    assert refractory.names == ("Anemia, Refractory",)  # the written string is a MeSH name: it wins
    plain = TrialNormalizer(linker, linker, qualifiers=False).normalize_batch([record])[0].conditions
    assert [c.concepts for c in plain] == [(), refractory.concepts, ()]


@pytest.mark.slow
def test_the_drug_default_links_supplementary_records_under_their_descriptors(mesh) -> None:
    from medlink.linking.spec import DRUGS

    drugs = Linker.load(exact_only=True, embedded=DRUGS)  # compiled into the cache on first use
    record = TrialRecord(
        "NCT90000010",
        interventions=(
            Intervention("Drug", "Fludarabine phosphate 25 mg/m2 IV"),
            Intervention("Biological", "sevirumab"),
        ),
    )
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
    from medlink.linking.spec import ExactMatch
    from medlink.trials.normalization.normalizer_spec import NormalizerSpec

    record = TrialRecord("NCT90000012", conditions=("Haemophilia A", "Parkinson's", "T2DM"))
    on = NormalizerSpec(ExactMatch(), None).build(progress=False)
    assert [c.names for c in on.normalize_batch([record])[0].conditions] == [
        ("Hemophilia A",),
        ("Parkinson Disease",),
        ("Diabetes Mellitus, Type 2",),
    ]
    off = NormalizerSpec(ExactMatch(), None, shorthand=False, respell=False).build(progress=False)
    assert [c.concepts for c in off.normalize_batch([record])[0].conditions] == [(), (), ()]
    as_written = NormalizerSpec(ExactMatch(), None, qualifiers=False).build(progress=False)
    assert as_written.qualifiers is False
    result = CliRunner().invoke(
        main,
        [
            "trials",
            "eval-normalization",
            str(TRIALS),
            "--exact-only",
            "--no-respell",
            "--no-shorthand",
            "--no-qualifiers",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output


def test_embedded_defaults_are_checked() -> None:
    from medlink.linking.spec import DRUGS, MESH, EmbeddedDefault, ExactMatch

    for kind in (EmbeddedDefault, ExactMatch):
        with pytest.raises(MedlinkError, match="embedded must be one of"):
            kind(embedded="chemicals")
        assert kind(embedded=DRUGS).embedded == MESH  # the old name of all of MeSH still works


def test_retrieval_below_a_field_threshold_is_nil(encoder, tmp_path: Path) -> None:
    from medlink.index import build_index, ontology_entries
    from medlink.terminology import Concept, Name, NameKind, Terminology
    from support import dense_linker

    def concept(cid: str, name: str, tree: str) -> Concept:
        return Concept(id=cid, preferred_name=name, names=(Name(name, NameKind.PREFERRED),), tree_numbers=(tree,))

    terminology = Terminology.from_concepts(
        [
            concept("MESH:D1", "Hypertension", "C14.907"),
            concept("MESH:D2", "Ibuprofen", "D02.455"),
            concept("MESH:D3", "Asthma", "C08.127"),
        ]
    )
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


def test_normalizer_linkers_leave_nil_to_the_field_thresholds(encoder, fixtures: Path, tmp_path: Path) -> None:
    """An index's own calibrated threshold would stack on the per-field ones: the normalizer's linkers run without."""
    from medlink.index import build_index, ontology_entries
    from medlink.index.update import update_manifest
    from medlink.linking.spec import OverIndex
    from medlink.terminology import SourceSpec, compile_terminology, save_terminology
    from medlink.trials.normalization.normalizer_spec import NormalizerSpec

    terminology = compile_terminology([SourceSpec.parse(f"mesh-desc-tsv:{fixtures / 'mesh_descriptors_tiny.tsv'}")])
    save_terminology(terminology, tmp_path / "term")
    index = build_index(
        ontology_entries(terminology),
        encoder,
        tmp_path / "index",
        terminology.fingerprint(),
        origin={"encoder": "minilm"},
    )
    update_manifest(index, nil_threshold=0.99)
    built = NormalizerSpec(OverIndex(index, tmp_path / "term"), None).build(progress=False)
    assert built.conditions.config.nil_threshold == 0 and not built.conditions.config.declares_nil
