"""How a terminology's names are written, as a whole: what annotation asks of it beyond single lookups (whether its
capitals mean anything; which words head so many of its names that alone they name a category, not a mention).
Counted in Arrow over the names' columns: a Python pass over UMLS-size names would cost seconds per load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SMALLEST_HEAD_SHARE = 0.001  # heads rarer than this are not kept (at most a thousand words)


@dataclass(frozen=True)
class NameStatistics:
    names: int
    capitals_share: float  # of names written without a small letter
    multi_word: int  # names of more than one word (normalized)
    heads: Mapping[str, int]  # last word of those names → how many end with it (where SMALLEST_HEAD_SHARE or more)

    def head_share(self, word: str) -> float:
        """The share of multi-word names that ``word`` ends ("syndrome": a tenth of MEDIC's)."""
        return self.heads.get(word, 0) / self.multi_word if self.multi_word else 0.0


def name_statistics(names: Any) -> NameStatistics:
    """``names``: a terminology's name columns (``text``, ``norm``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    texts = names.arrow("text", pa.large_string())  # the stores' own type: read in place, not copied
    capitals = pc.sum(pc.utf8_is_upper(texts)).as_py() or 0
    norms = names.arrow("norm", pa.large_string()).drop_null()  # not made distinct: few repeat, and it cost seconds
    multi = norms.filter(pc.match_substring(norms, " "))
    last = pc.struct_field(pc.extract_regex(multi, r"(?P<last>\S+)$"), [0])
    counted = pc.value_counts(last)
    common = counted.filter(pc.greater_equal(counted.field("counts"), SMALLEST_HEAD_SHARE * len(multi)))
    heads = dict(zip(common.field("values").to_pylist(), common.field("counts").to_pylist(), strict=True))
    return NameStatistics(len(texts), capitals / len(texts) if len(texts) else 0.0, len(multi), heads)
