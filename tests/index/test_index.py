"""Vector indexes with the real MiniLM: build, search, refusal of mismatches and corruption, resume, update."""

import json
from pathlib import Path

import numpy as np
import pytest

from medlink.errors import MedlinkError
from medlink.index import (
    IndexEntry,
    IndexFileError,
    VectorIndex,
    add_entries,
    build_index,
    mention_entries,
    ontology_entries,
)
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept


@pytest.fixture(scope="module")
def terminology() -> Terminology:
    return Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003424", "Crohn Disease", [Name("Regional Enteritis", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D007052", "Ibuprofen", [Name("Motrin", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003080", "Cold Temperature", [Name("Cold", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003139", "Common Cold", [Name("Cold", NameKind.EXACT)]),
            make_concept("MESH:D006973", "Hypertension", [Name("High Blood Pressure", NameKind.ENTRY_TERM)]),
        ]
    )


@pytest.fixture(scope="module")
def built(terminology, encoder, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("idx") / "index"
    return build_index(ontology_entries(terminology), encoder, folder, terminology.fingerprint())


def test_entries_are_distinct_normalized_names_with_every_concept(terminology) -> None:
    entries = ontology_entries(terminology)
    assert len(entries) == terminology.name_count - 1  # the two "Cold" names are one entry
    cold = next(e for e in entries if e.key == "cold")
    assert cold.concepts == ("MESH:D003139", "MESH:D003080")  # exact synonym before entry term


def test_search_finds_the_nearest_name(built, encoder) -> None:
    index = VectorIndex.load(built)
    [hits] = index.search(encoder.encode(["heart attacks in elderly"]), k=3)
    assert hits[0].entry.text == "Heart Attack" and hits[0].entry.concepts == ("MESH:D009203",)
    assert hits[0].score > hits[1].score > hits[2].score
    assert len(index) == 11 and index.count("D") == 0


def test_entries_are_read_row_by_row_or_in_one_batch_alike(built) -> None:
    table = VectorIndex.load(built).entries["O"]
    rows = [3, 0, 3, len(table) - 1]
    assert table.take(rows) == [table[row] for row in rows] and table.take([]) == []
    assert list(table)[3] == table[3]
    with pytest.raises(IndexError):
        table.take([len(table)])


def test_centroid_search(built, encoder) -> None:
    index = VectorIndex.load(built)
    [found] = index.search_centroids(encoder.encode(["high blood pressure"]), k=2)
    assert found[0][0] == "MESH:D006973"


def test_hnsw_kind_gives_the_same_nearest_name(terminology, encoder, tmp_path) -> None:
    folder = build_index(ontology_entries(terminology), encoder, tmp_path / "h", terminology.fingerprint(), kind="hnsw")
    index = VectorIndex.load(folder)
    assert index.manifest.kinds == {"O": "hnsw"}
    [hits] = index.search(encoder.encode(["motrin tablets"]), k=1)
    assert hits[0].entry.concepts == ("MESH:D007052",)
    assert index.faiss["O"].hnsw.efSearch == index.manifest.hnsw.ef_search  # saved with the graph
    narrow = VectorIndex.load(folder, ef_search=7)
    assert narrow.faiss["O"].hnsw.efSearch == 7
    assert narrow.search(encoder.encode(["motrin tablets"]), k=1)[0][0].entry.concepts == ("MESH:D007052",)


def test_manifest_names_encoder_terminology_and_checksums(built, encoder, terminology) -> None:
    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["encoder_fingerprint"] == encoder.identity.fingerprint()
    assert manifest["terminology"] == terminology.fingerprint()
    assert set(manifest["files"]) == {"entries.arrow", "O.faiss"}
    assert manifest["counts"] == {"O": 11, "D": 0}


def test_other_encoder_or_terminology_is_refused(built, encoder, terminology) -> None:
    from medlink.encoders import load_encoder

    index = VectorIndex.load(built)
    index.check_compatible(encoder.identity, terminology.fingerprint())
    with pytest.raises(IndexFileError, match=r"built with encoder .* but the linker uses"):
        index.check_compatible(load_encoder("minilm", quantize="int8").identity)
    with pytest.raises(IndexFileError, match="not from the loaded terminology"):
        index.check_compatible(terminology_fingerprint="0123456789abcdef")


def test_corrupt_or_partial_index_is_refused(built, tmp_path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    with open(copy / "O.faiss", "r+b") as handle:
        handle.seek(200)
        handle.write(b"\x00\x01\x02")
    opened = VectorIndex.load(copy)  # FAISS files are read, and checked, on their first search
    with pytest.raises(IndexFileError, match=r"O\.faiss does not match the checksum"):
        opened.search(np.zeros((1, opened.encoder.dimension), dtype=np.float32), 1)
    (copy / "O.faiss").unlink()
    with pytest.raises(IndexFileError, match="missing: the index is incomplete"):
        VectorIndex.load(copy)
    with pytest.raises(IndexFileError, match="is not a medlink index"):
        VectorIndex.load(tmp_path)


class CountingEncoder:
    """The real encoder, counting the texts it encodes and optionally failing after some calls."""

    def __init__(self, encoder, fail_after: int | None = None) -> None:
        self.inner, self.fail_after, self.encoded, self.calls = encoder, fail_after, [], 0

    identity = property(lambda self: self.inner.identity)
    dimension = property(lambda self: self.inner.dimension)
    count_head = None

    def encode(self, texts, batch_size=128, progress=False):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt
        self.calls += 1
        self.encoded.extend(texts)
        return self.inner.encode(texts, batch_size, progress)


def test_interrupted_build_resumes_from_its_chunks(terminology, encoder, tmp_path) -> None:
    entries = ontology_entries(terminology)
    target = tmp_path / "index"
    flaky = CountingEncoder(encoder, fail_after=2)
    with pytest.raises(KeyboardInterrupt):
        build_index(entries, flaky, target, terminology.fingerprint(), chunk_size=3)
    assert not target.exists()  # nothing half-built where the index should be
    assert len(flaky.encoded) == 6
    resumed = CountingEncoder(encoder)
    build_index(entries, resumed, target, terminology.fingerprint(), chunk_size=3)
    assert resumed.encoded == [e.text for e in entries[6:]]  # only the chunks that were missing
    clean = build_index(entries, encoder, tmp_path / "clean", terminology.fingerprint(), chunk_size=3)
    a, b = VectorIndex.load(target), VectorIndex.load(clean)
    np.testing.assert_allclose(a.faiss["O"].reconstruct_n(0, 11), b.faiss["O"].reconstruct_n(0, 11), atol=1e-3)
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # staging folders cleaned up


def test_incremental_add_encodes_only_new_names(built, encoder, tmp_path) -> None:
    import shutil

    folder = tmp_path / "index"
    shutil.copytree(built, folder)
    counting = CountingEncoder(encoder)
    counts = add_entries(
        folder,
        [
            IndexEntry("mi", "MI", ("MESH:D009203",), "O"),  # new
            IndexEntry("heart attack", "heart attack", ("MESH:D000001",), "O"),  # existing name, extra concept
            IndexEntry("cold", "Cold", ("MESH:D003080",), "O"),  # already there
        ],
        counting,
    )
    assert counts == {"encoded": 1, "merged": 1}
    assert counting.encoded == ["MI"]
    index = VectorIndex.load(folder)
    assert len(index) == 12
    assert next(e for e in index.entries["O"] if e.key == "heart attack").concepts == ("MESH:D009203", "MESH:D000001")
    [hits] = index.search(encoder.encode(["MI"]), k=1)
    assert hits[0].entry.text == "MI"


def test_a_build_takes_the_vectors_an_earlier_index_of_the_same_encoder_holds(
    built, terminology, encoder, tmp_path
) -> None:
    from medlink.encoders import load_encoder

    entries = [*ontology_entries(terminology), IndexEntry("mi", "MI", ("MESH:D009203",), "O")]
    counting = CountingEncoder(encoder)
    folder = build_index(entries, counting, tmp_path / "reused", "t2", reuse=[built])
    assert counting.encoded == ["MI"]  # only the text the earlier index lacks
    index = VectorIndex.load(folder)
    assert index.manifest.timing["reused"] == len(entries) - 1 and index.manifest.timing["encoded"] == 1
    fresh = VectorIndex.load(build_index(entries, encoder, tmp_path / "fresh", "t2"))
    for source in ("O",):
        taken, encoded = (ix.faiss[source].reconstruct_n(0, ix.count(source)) for ix in (index, fresh))
        assert np.abs(taken - encoded).max() < 2e-3  # the same vectors (fp16 storage)
    queries = encoder.encode(["heart attack", "motrin", "MI"])
    assert [[h.entry.key for h in hits] for hits in index.search(queries, 3)] == [
        [h.entry.key for h in hits] for hits in fresh.search(queries, 3)
    ]
    other = CountingEncoder(load_encoder("medlink-fast"))  # another encoder's vectors are never taken
    build_index(entries, other, tmp_path / "other", "t2", reuse=[built])
    assert len(other.encoded) == len(entries)


def test_a_mention_text_lists_its_concepts_by_how_often_it_was_annotated_with_them() -> None:
    terminology = Terminology.from_concepts(
        [make_concept("MESH:D016399", "Lymphoma, T-Cell"), make_concept("MESH:D006432", "Hemochromatosis")]
    )
    pairs = [
        ("hemochromatosis", ["MESH:D016399"]),
        ("Hemochromatosis", ["MESH:D006432"]),
        ("hemochromatosis", ["MESH:D006432"]),
        ("T-cell lymphoma", ["MESH:D016399"]),
    ]
    entries = {entry.key: entry for entry in mention_entries(pairs, terminology)}
    # a stray first annotation does not outrank the majority; it is kept, second
    assert entries["hemochromatosis"].concepts == ("MESH:D006432", "MESH:D016399")
    assert entries["hemochromatosis"].text == "hemochromatosis" and entries["t cell lymphoma"].concepts == (
        "MESH:D016399",
    )


def test_a_text_annotated_with_several_concepts_at_once_claims_them_all(tmp_path: Path) -> None:
    from medlink.evaluation.corpus import Gold
    from medlink.index.entry_table import read_entries, write_entries
    from medlink.linking.sieves.exact import ExactSieve

    terminology = Terminology.from_concepts(
        [
            make_concept("MESH:D006470", "Hemorrhage"),
            make_concept("MESH:D003556", "Cystitis"),
            make_concept("MESH:D002779", "Cholestasis"),
        ]
    )
    single = [("cystitis", ["MESH:D003556"]), ("cholestatic hepatitis", ["MESH:D002779"])]
    several = [
        ("Hemorrhagic cystitis", Gold.of([["MESH:D006470"], ["MESH:D003556"]]).parts),
        ("hemorrhagic cystitis", (("MESH:D006470",), ("MESH:D003556",))),
        ("cholestatic hepatitis", (("MESH:D002779",), ("MESH:D056486",))),  # Hepatitis is not in it
        ("bleeding", (("MESH:D006470",), ("MESH:D006470",))),
    ]  # one concept twice: not several
    entries = {entry.key: entry for entry in mention_entries(single, terminology, several=several)}
    assert entries["hemorrhagic cystitis"].several
    assert set(entries["hemorrhagic cystitis"].concepts) == {"MESH:D006470", "MESH:D003556"}
    assert not entries["cholestatic hepatitis"].several and "bleeding" not in entries
    outvoted = mention_entries([("hemorrhagic cystitis", ["MESH:D003556"])] * 3, terminology, several=several)
    assert [(e.concepts, e.several) for e in outvoted] == [(("MESH:D003556",), False)]  # three single, two several
    write_entries({"D": list(entries.values())}, tmp_path / "entries.parquet")
    read = {entry.key: entry for entry in read_entries(tmp_path / "entries.parquet")["D"]}
    assert read == entries  # the flag survives the round trip
    result = ExactSieve(terminology, read.values()).link("Hemorrhagic cystitis", "hemorrhagic cystitis")
    assert result is not None and result.several and not result.ambiguous and len(result.concepts) == 2


def test_a_copy_with_training_mentions_keeps_the_several_flag(built, terminology, encoder, tmp_path) -> None:
    """The copy an evaluation or benchmark with training mentions uses (index_with_mentions)."""
    from medlink.index import index_with_mentions
    from medlink.index.with_mentions import entries_digest

    concepts = ("MESH:D009203", "MESH:D006973")
    several = mention_entries([], terminology, several=[("two at once", tuple((c,) for c in concepts))])
    single = mention_entries([("two at once", concepts[:1])], terminology)
    assert entries_digest(several) != entries_digest(single)  # a cached copy of one is never taken for the other
    copy = VectorIndex.load(index_with_mentions(built, several, encoder, tmp_path / "with"))
    assert [(e.concepts, e.several) for e in copy.entries["D"]] == [(concepts, True)]


def test_an_index_written_before_the_several_flag_reads_as_single_concept(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from medlink.index.entry_table import read_entries

    pq.write_table(
        pa.table({"key": ["mi"], "text": ["MI"], "concepts": [["MESH:D009203"]], "source": ["D"], "added": [False]}),
        tmp_path / "entries.parquet",
    )
    assert not read_entries(tmp_path / "entries.parquet")["D"][0].several


def test_an_index_rebound_to_a_larger_terminology_reuses_its_vectors(built, terminology, encoder, tmp_path) -> None:
    from medlink.errors import MedlinkError
    from medlink.index.update import rebind_index
    from support import dense_linker

    larger = Terminology.from_concepts(
        [
            *terminology,
            make_concept(
                "MESH:C000002",
                "bevonium",
                [Name("bevonium methyl sulfate", NameKind.ENTRY_TERM)],
                parents=("MESH:D007052",),
            ),
        ]
    )
    rebound = rebind_index(built, tmp_path / "rebound", larger.fingerprint(), larger.__contains__, {})
    index = VectorIndex.load(rebound)
    index.check_compatible(encoder.identity, larger.fingerprint())
    original = VectorIndex.load(built)
    assert original.terminology_fingerprint == terminology.fingerprint()  # the source is left as it was
    assert len(index) == len(original)  # nothing encoded, nothing added
    linker = dense_linker(larger, index, encoder)
    assert linker.link("bevonium methyl sulfate").concepts == ("MESH:C000002",)  # the larger one's names: exact
    assert linker.link("myocardial infarct").concepts == ("MESH:D009203",)  # the vectors: dense
    with pytest.raises(MedlinkError, match="MESH:D009203"):
        rebind_index(built, tmp_path / "refused", "0123456789abcdef", lambda c: c != "MESH:D009203", {})
    assert not (tmp_path / "refused").exists()


@pytest.fixture(scope="module")
def mesh_subset() -> Terminology:
    from medlink.terminology import load_default_terminology

    mesh = load_default_terminology()
    return Terminology.from_concepts(concept for _, concept in zip(range(700), mesh, strict=False))


def agreeing_top_names(exact: VectorIndex, other: VectorIndex, queries: np.ndarray) -> float:
    same = 0
    for want, got in zip(exact.search(queries, k=1), other.search(queries, k=1), strict=True):
        if want[0].entry == got[0].entry:
            same += 1
            assert abs(want[0].score - got[0].score) < 0.02  # 8-bit codes score close to fp16
    return same / len(queries)


def test_compressed_kind_finds_what_exact_search_finds_and_checks_its_vector_file(
    encoder, mesh_subset, tmp_path
) -> None:
    from medlink.index.compressed import CompressedParameters

    entries = ontology_entries(mesh_subset)
    assert len(entries) > 1_000
    exact = build_index(entries, encoder, tmp_path / "exact", mesh_subset.fingerprint(), kind="exact")
    folder = build_index(
        entries,
        encoder,
        tmp_path / "small",
        mesh_subset.fingerprint(),
        kind="compressed",
        compressed=CompressedParameters.product(rescore=30),
    )
    compressed = VectorIndex.load(folder)
    assert compressed.manifest.kinds == {"O": "compressed"} and compressed.manifest.compressed.rescore == 30
    assert compressed.manifest.compressed.codes == "pq"
    assert {"O.faiss", "O.int8.npy", "O.scale.npy"} <= set(compressed.manifest.files)
    queries = encoder.encode([f"{entry.text} disorder" for entry in entries[::25]])
    assert agreeing_top_names(VectorIndex.load(exact), compressed, queries) >= 0.95
    with pytest.raises(MedlinkError, match=r"compressed with pq codes, which names cannot be added to.*--reuse"):
        add_entries(folder, [IndexEntry("new name", "new name", ("MESH:D009203",), "O")], encoder)
    add_entries(folder, [IndexEntry("a mention", "a mention", ("MESH:D009203",), "D")], encoder)  # O untouched
    assert VectorIndex.load(folder).manifest.compressed.rescore == 30 and VectorIndex.load(folder).count("D") == 1
    (folder / "O.int8.npy").write_bytes(b"")
    with pytest.raises(IndexFileError, match=r"O\.int8\.npy.*rebuild the index"):
        VectorIndex.load(folder).search(queries[:1], k=1)


def test_compressed_kind_over_8_bit_codes_is_one_mapped_file(encoder, mesh_subset, tmp_path) -> None:
    entries = ontology_entries(mesh_subset)
    exact = build_index(entries, encoder, tmp_path / "exact", mesh_subset.fingerprint(), kind="exact")
    folder = build_index(entries, encoder, tmp_path / "sq8", mesh_subset.fingerprint(), kind="compressed")
    index = VectorIndex.load(folder)
    assert index.manifest.compressed.codes == "sq8" and set(index.manifest.files) == {"O.faiss", "entries.arrow"}
    queries = encoder.encode([f"{entry.text} disorder" for entry in entries[::25]])
    assert agreeing_top_names(VectorIndex.load(exact), index, queries) >= 0.95
    assert index.faiss["O"].hnsw.efSearch == index.manifest.compressed.ef_search
    assert VectorIndex.load(folder, ef_search=40).faiss["O"].hnsw.efSearch == 40
    # names and training mentions are added to 8-bit codes as to any index; the build's parameters stay
    added = [IndexEntry("ticker trouble", "ticker trouble", ("MESH:D009203",), "O")]
    assert add_entries(folder, added, encoder)["encoded"] == 1
    add_entries(folder, [IndexEntry("a heart attack", "a heart attack", ("MESH:D009203",), "D")], encoder)
    grown = VectorIndex.load(folder)
    assert grown.manifest.compressed == index.manifest.compressed and grown.count("D") == 1
    [best] = grown.search(encoder.encode(["ticker trouble"]), k=1)[0][:1]
    assert best.entry.text == "ticker trouble" and best.entry.added
    (folder / "O.faiss").write_bytes((folder / "O.faiss").read_bytes()[:-4])
    with pytest.raises(IndexFileError, match=r"O\.faiss does not match the checksum"):
        VectorIndex.load(folder).search(queries[:1], k=1)


def test_a_compressed_index_built_before_its_codes_were_named_reads_as_pq(built, tmp_path) -> None:
    import shutil

    from medlink.index.manifest import IndexManifest

    written = json.loads((built / "manifest.json").read_text())
    written["compressed"] = {"links": 24, "ef_construction": 200, "ef_search": 768, "rescore": 20}
    assert IndexManifest.of(written, tmp_path / "manifest.json").compressed.codes == "pq"
    written["compressed"]["codes"] = "sq8"
    assert IndexManifest.of(written, tmp_path / "manifest.json").compressed.codes == "sq8"
    written["compressed"]["codes"] = "opq"
    shutil.copytree(built, tmp_path / "odd")
    (tmp_path / "odd" / "manifest.json").write_text(json.dumps(written))
    with pytest.raises(IndexFileError, match="compressed"):
        VectorIndex.load(tmp_path / "odd")


def test_a_long_build_says_how_long_it_expects_to_take(encoder) -> None:
    from medlink.index.build import expected_time

    names = [f"{word} disease type {i}" for i in range(40) for word in ("cardiac", "renal", "hepatic")]
    said = expected_time(encoder, names, done=1_000)
    assert said.startswith("encoding 120 names (1,000 encoded by an interrupted run are kept): about ")
    assert "names/s, timed on 120 of them" in said


def test_worker_processes_build_the_index_one_process_builds(terminology, encoder, tmp_path) -> None:
    from medlink.index.build import workdir_of

    entries = ontology_entries(terminology)
    origin = {"encoder": "minilm", "backend": "onnx"}
    alone = build_index(entries, encoder, tmp_path / "alone", terminology.fingerprint(), origin=origin)
    pooled = build_index(
        entries, encoder, tmp_path / "pooled", terminology.fingerprint(), origin=origin, chunk_size=3, workers=2
    )
    queries = encoder.encode(["cardiac illness", "heart attack", "high blood pressure"])
    first, second = VectorIndex.load(alone), VectorIndex.load(pooled)
    assert [[hit.entry.text for hit in hits] for hits in first.search(queries, 3)] == [
        [hit.entry.text for hit in hits] for hits in second.search(queries, 3)
    ]
    assert not workdir_of(tmp_path / "pooled").exists()  # the workers' chunks were assembled and cleared
