"""Recoding a compressed index to 4-bit codes: the graph kept, the search close to the 8-bit one's, the manifest
true to the new files, and every index that cannot be recoded refused without an output."""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from medlink.cli import main
from medlink.errors import MedlinkError
from medlink.index import IndexEntry, VectorIndex, add_entries, build_index, ontology_entries
from medlink.index.compressed import CompressedParameters
from medlink.index.recode import recode_index
from medlink.index.vector_index import IndexFileError
from medlink.terminology import Terminology


@pytest.fixture(scope="module")
def mesh_subset() -> Terminology:
    from medlink.terminology import load_default_terminology

    mesh = load_default_terminology()
    return Terminology.from_concepts(concept for _, concept in zip(range(700), mesh, strict=False))


@pytest.fixture(scope="module")
def eight_bit(encoder, mesh_subset, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("recode") / "sq8"
    return build_index(ontology_entries(mesh_subset), encoder, folder, mesh_subset.fingerprint(), kind="compressed")


def _links(index: VectorIndex) -> np.ndarray:
    import faiss

    searched = index.faiss["O"]
    return faiss.vector_to_array(getattr(searched, "index", searched).hnsw.neighbors)


def test_a_recoded_index_keeps_its_graph_and_finds_what_the_8_bit_one_finds(
    eight_bit, encoder, mesh_subset, tmp_path
) -> None:
    folder = recode_index(eight_bit, tmp_path / "sq4", "sq4")
    before, after = VectorIndex.load(eight_bit), VectorIndex.load(folder)
    assert after.manifest.compressed.codes == "sq4" and after.manifest.written["recoded_from"] == "sq8"
    assert after.manifest.compressed.links == before.manifest.compressed.links
    assert (folder / "O.faiss").stat().st_size < 0.8 * (eight_bit / "O.faiss").stat().st_size
    assert np.array_equal(_links(before), _links(after))
    assert {"O.residual.npy", "O.residual_scale.npy"} <= set(after.manifest.files)
    assert after.faiss["O"].index.hnsw.efSearch == before.manifest.compressed.ef_search
    entries = ontology_entries(mesh_subset)
    queries = encoder.encode([f"{entry.text} disorder" for entry in entries[::25]])
    assert _agreeing(before, after, queries) >= 0.95  # the residuals make up for the coarser codes
    # its rows on disk would need rewriting: new names are refused, as for product codes
    with pytest.raises(MedlinkError, match=r"compressed with sq4 codes, which names cannot be added to.*--reuse"):
        add_entries(folder, [IndexEntry("ticker trouble", "ticker trouble", ("MESH:D009203",), "O")], encoder)
    back = VectorIndex.load(recode_index(folder, tmp_path / "sq8", "sq8"))
    assert back.manifest.compressed.codes == "sq8" and set(back.manifest.files) == {"O.faiss", "entries.arrow"}
    assert _agreeing(before, back, queries) >= 0.95


def _agreeing(one: VectorIndex, other: VectorIndex, queries: np.ndarray) -> float:
    same = [
        want[0].entry == got[0].entry and abs(want[0].score - got[0].score) < 0.02
        for want, got in zip(one.search(queries, k=1), other.search(queries, k=1), strict=True)
    ]
    return sum(same) / len(same)


def test_what_cannot_be_recoded_is_refused_and_nothing_is_written(eight_bit, encoder, mesh_subset, tmp_path) -> None:
    with pytest.raises(MedlinkError, match="'sq8' codes already"):
        recode_index(eight_bit, tmp_path / "same", "sq8")
    with pytest.raises(MedlinkError, match="recoded to sq8 or sq4, not 'pq'"):
        recode_index(eight_bit, tmp_path / "pq", "pq")
    entries = ontology_entries(mesh_subset)[:200]
    exact = build_index(entries, encoder, tmp_path / "exact", mesh_subset.fingerprint(), kind="exact")
    with pytest.raises(MedlinkError, match="no compressed source"):
        recode_index(exact, tmp_path / "from-exact", "sq4")
    product = build_index(
        entries, encoder, tmp_path / "product", "f" * 16, kind="compressed", compressed=CompressedParameters.product()
    )
    with pytest.raises(MedlinkError, match=r"'pq' codes.*--codes sq4 --reuse"):
        recode_index(product, tmp_path / "from-pq", "sq4")
    built = build_index(  # the same codes, built directly
        entries, encoder, tmp_path / "built", "f" * 16, kind="compressed", compressed=CompressedParameters(codes="sq4")
    )
    assert VectorIndex.load(built).manifest.compressed.codes == "sq4"
    assert VectorIndex.load(built).search(encoder.encode([entries[7].text]), k=1)[0][0].entry == entries[7]
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for path in eight_bit.iterdir():
        (damaged / path.name).write_bytes(path.read_bytes())
    (damaged / "O.faiss").write_bytes((damaged / "O.faiss").read_bytes()[:-8])
    with pytest.raises(IndexFileError, match=r"O\.faiss does not match the checksum"):
        recode_index(damaged, tmp_path / "from-damaged", "sq4")
    assert not any(path.name.startswith(("from-", "same", "pq", ".from-")) for path in tmp_path.iterdir())


def test_the_commands_build_and_recode_4_bit_codes_and_say_what_they_need(eight_bit, tmp_path) -> None:
    runner = CliRunner()
    refused = runner.invoke(main, ["index", "build", "--codes", "sq4", "-o", str(tmp_path / "auto")])
    assert refused.exit_code == 2 and "--codes sq4 is for a compressed index: add --kind compressed" in refused.output
    spark = ["index", "build", "--codes", "sq4", "--kind", "compressed", "--spark", "local[1]", "-o", str(tmp_path)]
    refused = runner.invoke(main, spark)
    assert refused.exit_code == 2 and "medlink index recode" in refused.output
    done = runner.invoke(main, ["index", "recode", str(eight_bit), "--codes", "sq4", "-o", str(tmp_path / "sq4")])
    assert done.exit_code == 0, done.output
    assert VectorIndex.load(tmp_path / "sq4").manifest.compressed.codes == "sq4"


def test_a_recode_carries_only_what_the_manifest_lists_and_checks_its_output_first(eight_bit, tmp_path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for path in eight_bit.iterdir():
        (source / path.name).write_bytes(path.read_bytes())
    (source / "manifest.json.partial").write_text("{}")  # left by a killed manifest update
    recoded = recode_index(source, tmp_path / "sq4", "sq4")
    assert not (recoded / "manifest.json.partial").exists()
    assert set(VectorIndex.load(recoded).manifest.files) == {p.name for p in recoded.iterdir()} - {"manifest.json"}
    (tmp_path / "a-file").write_text("mine")
    with pytest.raises(MedlinkError, match="a-file exists and is not a medlink index"):
        recode_index(source, tmp_path / "a-file", "sq4")
    assert (tmp_path / "a-file").read_text() == "mine"


def test_rows_or_codes_other_than_the_manifest_says_are_refused_naming_the_file(eight_bit, encoder, tmp_path) -> None:
    import json

    from medlink.folders import sha256_of

    query = encoder.encode(["heart attack"])
    folder = recode_index(eight_bit, tmp_path / "sq4", "sq4")
    manifest = json.loads((folder / "manifest.json").read_text())
    np.save(folder / "O.residual.npy", np.zeros((3, 5), dtype=np.uint8))  # another shape, its checksum made true
    manifest["files"]["O.residual.npy"] = sha256_of(folder / "O.residual.npy")
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexFileError, match=r"O\.residual\.npy holds uint8 rows of shape \(3, 5\)"):
        VectorIndex.load(folder).search(query, k=1)
    (folder / "O.faiss").write_bytes((eight_bit / "O.faiss").read_bytes())  # an 8-bit graph named 4-bit
    manifest["files"]["O.faiss"] = sha256_of(folder / "O.faiss")
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexFileError, match=r"O\.faiss does not hold the sq4 codes its manifest names"):
        VectorIndex.load(folder).search(query, k=1)
