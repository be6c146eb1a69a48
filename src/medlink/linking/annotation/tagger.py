"""A span tagger: a transformer fine-tuned for token classification (BIO tags over entity types) on annotated
documents, run with ONNX Runtime. It finds mentions as the annotators of its training corpora marked them, names
no dictionary has included ("cardiotoxicity", "5-HT3 antagonist-induced nausea"); the linker then says which
concept each one is.

A tagger folder holds ``model.onnx`` (token logits), ``tokenizer.json`` and ``tagger.json`` (:class:`TaggerCard`).
Long documents are read in overlapping windows of equal size (no longer than the card's window); each token keeps
the logits of the window where it sits furthest from an edge."""

from __future__ import annotations

import functools
import json
import math
import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlink.errors import MedlinkError

TAGGER_FORMAT = "medlink-span-tagger-1"
OUTSIDE = "O"


@dataclass(frozen=True)
class TaggerCard:
    """``labels``: the BIO labels, in the order of the model's outputs (``O``, ``B-Disease``, ``I-Disease``, …);
    ``window`` / ``overlap``: tokens per window and how many consecutive windows share."""

    labels: tuple[str, ...]
    window: int
    overlap: int
    base: str
    trained_on: tuple[str, ...]
    format: str = TAGGER_FORMAT

    @property
    def entity_types(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(label[2:] for label in self.labels if label != OUTSIDE))

    def save(self, folder: Path) -> None:
        (folder / "tagger.json").write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> TaggerCard:
        path = folder / "tagger.json"
        if not path.is_file():
            raise MedlinkError(
                f"{folder} is not a span tagger: it has no tagger.json (`medlink train tagger` makes one)"
            )
        fields = json.loads(path.read_text(encoding="utf-8"))
        if fields.get("format") != TAGGER_FORMAT:
            raise MedlinkError(
                f"{path}: a span tagger of format {fields.get('format')!r}; this medlink reads "
                f"{TAGGER_FORMAT!r}: train it again with `medlink train tagger`"
            )
        return cls(**{**fields, "labels": tuple(fields["labels"]), "trained_on": tuple(fields["trained_on"])})


@dataclass(frozen=True)
class TaggedSpan:
    start: int
    end: int
    entity_type: str
    score: float  # the mean probability of the span's tags


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class SpanTagger:
    """Loads lazily: the ONNX session and tokenizer are made on the first :meth:`tag`."""

    def __init__(self, folder: Path, threads: int | None = None) -> None:
        """``threads``: windows run at once, each on one thread (``None``: ``OMP_NUM_THREADS`` when set, as a
        service's worker processes and Spark's set it, else the CPUs this process may use)."""
        self.folder = Path(folder)
        self.card = TaggerCard.load(self.folder)
        self.threads = threads
        self._runtime: tuple[Any, list[str], Any] | None = None
        self._opening = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:  # a copy (a Spark worker's) opens its own session
        return {"folder": self.folder, "threads": self.threads}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["folder"], state["threads"])  # type: ignore[misc]

    @functools.cached_property
    def packaged(self) -> bool:
        """Whether this is the tagger ``medlink[tagger]`` installs (looked up once: finding it takes milliseconds,
        and annotation asks on every call)."""
        from medlink.models.catalog import model_entry, model_location

        folder = model_location(model_entry(PACKAGED))
        return folder is not None and folder.resolve() == self.folder.resolve()

    def learned_from(self, corpus_name: str) -> bool:
        """Whether this tagger was trained on the corpus file ``corpus_name``, by its name as the card lists it
        (a corpus read for one kind is named "FILE [Kind]"; a gzipped copy counts). A renamed copy is not
        recognized: the card keeps file names, not the documents."""
        name = corpus_name.split(" [", 1)[0].casefold().removesuffix(".gz")
        return any(name == trained.casefold().removesuffix(".gz") for trained in self.card.trained_on)

    def _session(self) -> tuple[Any, list[str], Any]:
        with self._opening:
            if self._runtime is None:
                from tokenizers import Tokenizer

                from medlink.encoders.onnx import cpu_session

                session = cpu_session(self.folder / "model.onnx", 1)  # one thread a window: see tag
                tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                self._runtime = (session, [i.name for i in session.get_inputs()], tokenizer)
            return self._runtime

    def tag(self, texts: Sequence[str]) -> list[list[TaggedSpan]]:
        """The spans of each text, in order. Each window is run alone: a dynamically quantized model scales its
        activations by the whole batch's, so in batches of eight a document's spans depended on the documents
        beside it (NCBI-disease test, 2-layer tagger: 88.5 % of spans the same read alone or in a batch). Windows
        run on several threads at once, each run on one: on 2 cores that reads more per core than one run on two
        (52 documents/s on one thread, 84 on two), and it leaves room for the linker beside it."""
        session, inputs, tokenizer = self._session()
        # a lone surrogate (JSON allows one) stops the tokenizer: read it as U+FFFD, one character for one
        encodings = tokenizer.encode_batch([_LONE_SURROGATE.sub("\ufffd", t) for t in texts], add_special_tokens=False)
        body = self.card.window - 2  # [CLS] and [SEP]
        windows = [
            (number, start, end)
            for number, encoding in enumerate(encodings)
            for start, end in windows_of(len(encoding.ids), body, self.card.overlap)
        ]
        cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")

        def run(window: tuple[int, int, int]) -> np.ndarray:
            number, start, end = window
            ids = np.array([[cls_id, *encodings[number].ids[start:end], sep_id]], np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            return session.run(None, {name: feed[name] for name in inputs})[0][0]

        workers = min(self._workers(), len(windows))
        if workers > 1:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="medlink-tagger-window") as pool:
                outputs = list(pool.map(run, windows))
        else:
            outputs = [run(window) for window in windows]
        logits: list[np.ndarray] = [np.zeros((len(e.ids), len(self.card.labels)), np.float32) for e in encodings]
        best_margin: list[np.ndarray] = [np.full(len(e.ids), -1) for e in encodings]
        for (number, start, end), out in zip(windows, outputs, strict=True):
            size = end - start
            positions = np.arange(size)
            margin = np.minimum(positions, size - 1 - positions)  # distance from the window's edge
            if start == 0:
                margin = np.where(positions < size // 2, body, margin)  # the document's own start is no edge
            if end == len(encodings[number].ids):
                margin = np.where(positions >= size - size // 2, body, margin)
            target = slice(start, end)
            better = margin > best_margin[number][target]
            logits[number][target][better] = out[1 : size + 1][better]
            best_margin[number][target] = np.maximum(best_margin[number][target], margin)
        return [
            decode(self.card.labels, scores, encoding.offsets, text)
            for scores, encoding, text in zip(logits, encodings, texts, strict=True)
        ]

    def _workers(self) -> int:
        from medlink.encoders.onnx import threads_from_environment

        usable = getattr(os, "sched_getaffinity", None)  # Linux: the CPUs this process may use; elsewhere all
        return self.threads or threads_from_environment() or (len(usable(0)) if usable else os.cpu_count() or 1)


def windows_of(length: int, body: int, overlap: int) -> list[tuple[int, int]]:
    """The fewest windows of at most ``body`` tokens that cover ``length`` tokens with consecutive ones sharing at
    least ``overlap``, all of one size: 300 tokens in windows of 254 are two of 166, not 254 and 254 (a third less
    to compute)."""
    if length <= body:
        return [(0, length)]
    step_limit = max(1, body - overlap)
    count = math.ceil((length - body) / step_limit) + 1
    size = min(body, math.ceil((length + (count - 1) * overlap) / count))
    step = (length - size) / (count - 1)
    starts = [round(number * step) for number in range(count)]
    return [(start, start + size) for start in starts]


def decode(
    labels: Sequence[str], logits: np.ndarray, offsets: Sequence[tuple[int, int]], text: str
) -> list[TaggedSpan]:
    """Spans from per-token BIO logits: a span starts at ``B-X`` (or an ``I-X`` that follows another type) and runs
    while ``I-X`` follows; word pieces inside a word take the word's first piece's decision, so a span always
    covers whole words."""
    if not len(logits):
        return []
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=1, keepdims=True)
    best = probabilities.argmax(axis=1)
    spans: list[TaggedSpan] = []
    current: tuple[int, int, str, list[float]] | None = None
    for index, (start, end) in enumerate(offsets):
        if continues_word(offsets, index, text):
            if current is not None and current[1] == offsets[index - 1][1]:
                current = (current[0], end, current[2], current[3])
            continue
        label = labels[best[index]]
        kind = label[2:]
        if label == OUTSIDE:
            _close(current, spans)
            current = None
        elif label.startswith("I-") and current is not None and current[2] == kind:
            current[3].append(float(probabilities[index, best[index]]))  # in place: a copy per token was quadratic
            current = (current[0], end, kind, current[3])
        else:
            _close(current, spans)
            current = (start, end, kind, [float(probabilities[index, best[index]])])
    _close(current, spans)
    return spans


def continues_word(offsets: Sequence[tuple[int, int]], index: int, text: str) -> bool:
    """Whether token ``index`` is a later piece of the word the token before it began ("nephro|toxicity")."""
    start = offsets[index][0]
    return (
        index > 0
        and start == offsets[index - 1][1]
        and text[start - 1 : start].isalnum()
        and text[start : start + 1].isalnum()
    )


def _close(current: tuple[int, int, str, list[float]] | None, spans: list[TaggedSpan]) -> None:
    if current is not None:
        spans.append(TaggedSpan(current[0], current[1], current[2], float(np.mean(current[3]))))


PACKAGED = "span-tagger"  # the model name medlink[tagger] installs (`medlink models`)
NO_TAGGER = "none"


def choose_tagger(choice: str | Path | None) -> SpanTagger | None:
    """``None`` or ``"auto"``: the packaged tagger when ``medlink[tagger]`` is installed, else none; ``"none"``: no
    tagger; anything else: a tagger folder (``medlink train tagger``)."""
    from medlink.models.catalog import model_entry, model_location

    if choice is None or choice == "auto":
        folder = model_location(model_entry(PACKAGED))
        return SpanTagger(folder) if folder is not None and (folder / "tagger.json").is_file() else None
    if str(choice) == NO_TAGGER:
        return None
    folder = Path(choice)
    if not folder.is_dir():
        raise MedlinkError(
            f"--tagger {choice}: no such folder (give 'auto', 'none' or a folder from `medlink train tagger`)"
        )
    return SpanTagger(folder)
