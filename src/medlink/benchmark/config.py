"""A benchmark suite as a TOML file: datasets (terminology, test corpus, optional training corpus, folds) and
systems (which encoder, which sieves, whether training mentions are searched), every pair of them run.

    notes = ["QuickUMLS runs with a blank spaCy pipeline."]   # top level: printed under the report's tables

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
    name = "Gilda + training mentions"
    system = "gilda"                           # a peer: "gilda", "quickumls", "scispacy" or "medcat"
                                               # (benchmark/peers/), always isolated; python = ".../bin/python"
                                               # runs it in another virtualenv (scispaCy: the environment
                                               # variable MEDLINK_PEERS_PYTHON; it cannot share medlink's)
    mentions = true                            # a peer gets the training mentions as synonyms of their concepts
    skip = {"CADEC zero-shot" = "why"}         # datasets it is not run on: a dash and the reason in the report

    [[annotation]]                             # end-to-end annotation of documents (benchmark/annotation_runs.py)
    name = "BC5CDR Disease dev"
    terminology = ["ctd:{data}/terminologies/medic/CTD_diseases.tsv.gz"]
    corpus = "pubtator:{data}/corpora/bc5cdr/CDR_DevelopmentSet.PubTator.txt"
    train = "pubtator:{data}/corpora/bc5cdr/CDR_TrainingSet.PubTator.txt"
    entity_type = "Disease"

    [[annotators]]
    name = "medlink annotate --train"
    system = "medlink"                         # or a peer, as for [[systems]]
    mentions = true                            # medlink: learns from the training documents (--train); a peer:
                                               # their mentions as synonyms
    shipped = false                            # medlink only: its packaged tagger and corpus lexicon as well

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
PEERS = ("gilda", "quickumls", "scispacy", "medcat")
THRESHOLDED = (MEDLINK, "scispacy")  # the systems whose threshold a benchmark may set


@dataclass(frozen=True)
class SystemSpec:
    name: str
    sieves: str = "exact"
    encoder: str | None = None  # needed by dense, hybrid and rrf sieves
    mentions: bool = False  # medlink: index the training mentions (source D); a peer: them as synonyms
    abbreviations: bool = True
    composites: bool = True
    system: str = MEDLINK  # or one of PEERS
    isolated: bool = False  # in a process of its own (peers always are)
    threshold: float | None = None  # a peer's score threshold (its documented default when None); medlink's nil
    python: str | None = None  # the interpreter an isolated system runs under
    timeout_minutes: float | None = None  # an isolated run still going after this is stopped and reported as such
    skip: dict[str, str] = field(default_factory=dict)  # dataset name -> why this system is not run on it (a dash)

    def __post_init__(self) -> None:
        if self.system not in (MEDLINK, *PEERS):
            raise ValueError(f"system {self.name!r}: unknown system {self.system!r} ({', '.join((MEDLINK, *PEERS))})")
        if self.threshold is not None and self.system not in THRESHOLDED:
            raise ValueError(f"system {self.name!r}: {self.system} takes no threshold here (its own default is used)")

    @property
    def runs_isolated(self) -> bool:
        return self.isolated or self.system != MEDLINK


@dataclass(frozen=True)
class AnnotatorSpec:
    """A system annotating whole documents, always in a process of its own."""

    name: str
    system: str = MEDLINK  # or one of PEERS but scispacy (its linker links spans; it has no dictionary tagger)
    mentions: bool = False  # medlink: learn from the training documents (--train); a peer: mentions as synonyms
    shipped: bool = False  # medlink: its packaged span tagger and corpus lexicon too (what `annotate` does)
    python: str | None = None
    timeout_minutes: float | None = None

    def __post_init__(self) -> None:
        if self.system not in ANNOTATORS:
            raise ValueError(f"annotator {self.name!r}: unknown system {self.system!r} ({', '.join(ANNOTATORS)})")
        if self.shipped and self.system != MEDLINK:
            raise ValueError(f"annotator {self.name!r}: shipped applies to medlink only")


ANNOTATORS = (MEDLINK, "gilda", "quickumls", "medcat")


@dataclass(frozen=True)
class BenchmarkConfig:
    datasets: tuple[DatasetSpec, ...]
    systems: tuple[SystemSpec, ...]
    ks: tuple[int, ...] = (1, 5)
    compare: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # pairs of system names to test
    annotation: tuple[DatasetSpec, ...] = ()  # corpora annotated end to end by every annotator
    annotators: tuple[AnnotatorSpec, ...] = ()
    notes: tuple[str, ...] = ()  # printed under the report's tables: how systems were run, why a figure is so


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
        annotation = tuple(_dataset(entry) for entry in raw.get("annotation", []))
        annotators = tuple(AnnotatorSpec(**entry) for entry in raw.get("annotators", []))
        notes = raw.get("notes", [])
        notes = (notes,) if isinstance(notes, str) else tuple(str(note) for note in notes)
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
    if bool(annotation) != bool(annotators):
        raise MedlinkError(f"{path}: [[annotation]] corpora and [[annotators]] come together")
    for corpus in annotation:
        if corpus.folds != ("",) or corpus.subset != "all":
            raise MedlinkError(f"{path}: annotation corpus {corpus.name!r} takes no folds or subset")
    return BenchmarkConfig(datasets, systems, ks, compare, annotation, annotators, notes)


def _dataset(entry: dict) -> DatasetSpec:
    entry = dict(entry)
    terminology = entry.pop("terminology")
    entry["terminology"] = (terminology,) if isinstance(terminology, str) else tuple(terminology)
    entry["folds"] = tuple(str(f) for f in entry.pop("folds", ("",)))
    donors = entry.pop("synonyms_from", ())
    entry["synonyms_from"] = (donors,) if isinstance(donors, str) else tuple(donors)
    return DatasetSpec(**entry)
