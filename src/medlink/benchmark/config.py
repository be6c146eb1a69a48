"""A benchmark suite as a TOML file: datasets (terminology, test corpus, optional training corpus, folds) and
systems (which encoder, which sieves, whether training mentions are searched), every pair of them run.

    [[datasets]]
    name = "NCBI-disease test"
    terminology = ["biosyn:{data}/terminologies/medic/medic_06Jul2012.txt"]
    corpus = "pubtator:{data}/corpora/ncbi-disease/NCBItestset_corpus.txt"
    train = "pubtator:{data}/corpora/ncbi-disease/NCBItrainset_corpus.txt"

    [[datasets]]
    name = "CADEC zero-shot"
    folds = ["0", "1", "2", "3", "4"]           # {fold} in paths; the report gives the mean over folds
    terminology = ["tsv:{data}/corpora/cadec/CADEC_{fold}/standard.txt"]
    namespace = "SNOMEDCT"
    corpus = "cadec:{data}/corpora/cadec/CADEC_{fold}/test.txt"
    synonyms_from = ["mesh"]                    # borrow names from the embedded MeSH (terminology/borrowing.py),
                                                # then from each further terminology or FORMAT:PATH source

    [[datasets]]
    name = "NCBI-disease test, refined"
    subset = "refined"                         # or "zero-shot" / "stratified" (gold concepts unseen / seen in
    ...                                        # train); dictionary_fraction = 0.5 keeps half of each concept's names

    [[systems]]
    name = "exact match"
    sieves = "exact"

    [[systems]]
    name = "medlink model, full pipeline"
    encoder = "medlink"
    sieves = "exact,D-T@0.95,hybrid=0.8"
    mentions = true                            # index the dataset's training mentions (source D)
    isolated = true                            # run in a process of its own: start-up, speed, peak memory

    [[systems]]
    name = "Gilda"
    system = "gilda"                           # a peer: "gilda", "quickumls" or "scispacy" (benchmark/peers/),
                                               # always isolated; python = ".../bin/python" (or the environment
                                               # variable MEDLINK_PEERS_PYTHON) runs it in another virtualenv

``{data}`` is the data folder given on the command line (default ``../shared/data``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.evaluation.setups import SUBSETS


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    terminology: tuple[str, ...]  # FORMAT:PATH sources, merged
    corpus: str
    train: str | None = None
    entity_type: str | None = None
    namespace: str | None = None  # for bare ids in the terminology sources and the corpora
    folds: tuple[str, ...] = ("",)
    subset: str = "all"  # "refined", "zero-shot" or "stratified": measured against the training corpus
    dictionary_fraction: float | None = None  # keep this share of each concept's names (DILBERT §5.5.3)
    synonyms_from: tuple[str, ...] = ()  # terminologies to borrow synonyms from, in turn ("mesh": the embedded one)
    crosswalk: str | None = None  # also score across terminology releases: "shipped" or a crosswalk TSV

    def __post_init__(self) -> None:
        if self.subset not in SUBSETS:
            raise ValueError(f"dataset {self.name!r}: subset must be one of {', '.join(SUBSETS)}")
        if self.subset != "all" and self.train is None:
            raise ValueError(f"dataset {self.name!r}: subset {self.subset!r} needs a train corpus")

    def for_fold(self, fold: str, data: Path) -> DatasetSpec:
        """This dataset with ``{data}`` and ``{fold}`` filled in."""

        def fill(text: str) -> str:
            return text.replace("{data}", str(data)).replace("{fold}", fold)

        train = fill(self.train) if self.train else None
        terminology = tuple(fill(t) for t in self.terminology)
        donors = tuple(fill(donor) for donor in self.synonyms_from)
        crosswalk = fill(self.crosswalk) if self.crosswalk else None
        return replace(
            self,
            terminology=terminology,
            corpus=fill(self.corpus),
            train=train,
            folds=(fold,),
            synonyms_from=donors,
            crosswalk=crosswalk,
        )


MEDLINK = "medlink"
PEERS = ("gilda", "quickumls", "scispacy")


@dataclass(frozen=True)
class SystemSpec:
    name: str
    sieves: str = "exact"
    encoder: str | None = None  # needed by dense, hybrid and rrf sieves
    mentions: bool = False
    abbreviations: bool = True
    composites: bool = True
    system: str = MEDLINK  # or one of PEERS
    isolated: bool = False  # in a process of its own (peers always are)
    threshold: float | None = None  # a peer's score threshold (its documented default when None); medlink's nil
    python: str | None = None  # the interpreter an isolated system runs under
    timeout_minutes: float | None = None  # an isolated run still going after this is stopped and reported as such

    def __post_init__(self) -> None:
        if self.system not in (MEDLINK, *PEERS):
            raise ValueError(f"system {self.name!r}: unknown system {self.system!r} ({', '.join((MEDLINK, *PEERS))})")

    @property
    def runs_isolated(self) -> bool:
        return self.isolated or self.system != MEDLINK


@dataclass(frozen=True)
class BenchmarkConfig:
    datasets: tuple[DatasetSpec, ...]
    systems: tuple[SystemSpec, ...]
    ks: tuple[int, ...] = (1, 5)
    compare: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # pairs of system names to test


def load_config(path: Path | str) -> BenchmarkConfig:
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise MedlinkError(f"{path}: cannot read the benchmark configuration: {error}") from None
    try:
        datasets = tuple(_dataset(entry) for entry in raw.get("datasets", []))
        systems = tuple(SystemSpec(**entry) for entry in raw.get("systems", []))
        ks = tuple(int(k) for k in raw.get("ks", (1, 5)))
        compare = tuple((str(a), str(b)) for a, b in raw.get("compare", []))
    except (TypeError, ValueError) as error:
        raise MedlinkError(f"{path}: {error}") from None
    if not datasets or not systems:
        raise MedlinkError(f"{path}: a benchmark needs at least one [[datasets]] and one [[systems]] entry")
    names = {system.name for system in systems}
    for pair in compare:
        if not set(pair) <= names:
            raise MedlinkError(f"{path}: compare names a system that is not defined: {pair}")
    for system in (system for system in systems if system.system == MEDLINK):
        needs_encoder = any(
            part.split("@")[0].split("=")[0].strip().lower() not in ("exact", "sparse")
            for part in system.sieves.split(",")
            if part.strip()
        )
        if needs_encoder and system.encoder is None:
            raise MedlinkError(f"{path}: system {system.name!r} uses dense sieves but names no encoder")
    return BenchmarkConfig(datasets, systems, ks, compare)


def _dataset(entry: dict) -> DatasetSpec:
    entry = dict(entry)
    terminology = entry.pop("terminology")
    entry["terminology"] = (terminology,) if isinstance(terminology, str) else tuple(terminology)
    entry["folds"] = tuple(str(f) for f in entry.pop("folds", ("",)))
    donors = entry.pop("synonyms_from", ())
    entry["synonyms_from"] = (donors,) if isinstance(donors, str) else tuple(donors)
    return DatasetSpec(**entry)
