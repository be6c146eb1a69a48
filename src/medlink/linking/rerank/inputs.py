"""Token inputs of the keywords attentive ranker: ``[CLS] [PS] [PT] mention [SEP] candidate [SEP]`` (Liang et al.
2021, §3.2), with the rows of attention that [PS] and [PT] may use.

[PS] attends only to the site keywords of the mention and the candidate, [PT] only to the type keywords (and each
to itself, so that a pair without keywords still has something to read); every other token attends to the whole
pair. The two tokens are a BERT vocabulary's ``[unused0]`` and ``[unused1]``, so the model needs no new embedding
rows and its ONNX export takes plain token ids. Without keywords (the plain cross-encoder of the ablation) the
input is ``[CLS] mention [SEP] candidate [SEP]``.

Numpy and ``tokenizers`` only: the linker scores pairs without torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medlink.errors import MedlinkError
from medlink.linking.rerank.keywords import KeywordLexicon

SITE_TOKEN, TYPE_TOKEN = "[unused0]", "[unused1]"
KEYWORD_ROWS = 2  # [PS] and [PT], right after [CLS]


@dataclass(frozen=True)
class PairInputs:
    """A batch, padded: ids, segment ids and padding mask ``(batch, tokens)``; ``keyword_mask`` ``(batch, 2,
    tokens)``, what [PS] (row 0) and [PT] (row 1) may attend to (all zeros without keywords)."""

    input_ids: np.ndarray
    token_type_ids: np.ndarray
    attention_mask: np.ndarray
    keyword_mask: np.ndarray

    def feed(self) -> dict[str, np.ndarray]:
        return {
            "input_ids": self.input_ids,
            "token_type_ids": self.token_type_ids,
            "attention_mask": self.attention_mask,
            "keyword_mask": self.keyword_mask,
        }


class PairEncoder:
    """Turns (mention, candidate name) pairs into :class:`PairInputs`.

    tokenizer: a ``tokenizers.Tokenizer`` (the model folder's ``tokenizer.json``).
    lexicon: the keywords; ``None`` for the plain cross-encoder.
    max_length: tokens per pair, special tokens included (mentions and names are short; longer pairs are cut
        longest-first).
    """

    def __init__(self, tokenizer: Any, lexicon: KeywordLexicon | None, max_length: int = 48) -> None:
        self.tokenizer = tokenizer
        self.lexicon = lexicon
        self.max_length = max_length
        extra = KEYWORD_ROWS if lexicon is not None else 0
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length - extra)
        self._markers: tuple[int, ...] = ()
        if lexicon is not None:
            ids = [tokenizer.token_to_id(token) for token in (SITE_TOKEN, TYPE_TOKEN)]
            if None in ids:
                raise MedlinkError(
                    f"the keywords attentive ranker needs a BERT vocabulary with {SITE_TOKEN} "
                    f"and {TYPE_TOKEN}; this tokenizer lacks them (use the plain cross-encoder)"
                )
            self._markers = tuple(int(i) for i in ids)

    def encode(self, mentions: Sequence[str], names: Sequence[str]) -> PairInputs:
        if len(mentions) != len(names):
            raise ValueError(f"{len(mentions)} mentions for {len(names)} names")
        encodings = self.tokenizer.encode_batch([(m or " ", n or " ") for m, n in zip(mentions, names, strict=True)])
        extra = len(self._markers)
        width = max((len(e.ids) for e in encodings), default=0) + extra
        size = len(encodings)
        ids = np.zeros((size, width), dtype=np.int64)
        segments = np.zeros((size, width), dtype=np.int64)
        padding = np.zeros((size, width), dtype=np.int64)
        keyword_mask = np.zeros((size, KEYWORD_ROWS, width), dtype=np.int64)
        for row, (encoding, mention, name) in enumerate(zip(encodings, mentions, names, strict=True)):
            tokens = [encoding.ids[0], *self._markers, *encoding.ids[1:]]
            length = len(tokens)
            ids[row, :length] = tokens
            segments[row, :length] = [encoding.type_ids[0], *([0] * extra), *encoding.type_ids[1:]]
            padding[row, :length] = 1
            if self.lexicon is not None:
                self._mark_keywords(keyword_mask[row], encoding, (mention, name))
        return PairInputs(ids, segments, padding, keyword_mask)

    def _mark_keywords(self, rows: np.ndarray, encoding: Any, texts: tuple[str, str]) -> None:
        assert self.lexicon is not None
        spans = [self.lexicon.kinds(text) for text in texts]
        rows[0, 1] = rows[1, 2] = 1  # each marker sees itself
        for position, (sequence, (start, end)) in enumerate(zip(encoding.sequence_ids, encoding.offsets, strict=True)):
            if sequence is None or end <= start:
                continue
            for span_start, span_end, kind in spans[sequence]:
                if start < span_end and span_start < end:
                    rows[0 if kind == "site" else 1, position + KEYWORD_ROWS] = 1
                    break
