"""UMLS Rich Release Format: ``MRCONSO.RRF`` names, ``MRSTY.RRF`` semantic types, ``MRREL.RRF`` relations.

For licensed UMLS users; point the reader at the ``META`` folder (or at ``MRCONSO.RRF`` itself, the other two
files are then looked for beside it). Column layouts are those of the UMLS Reference Manual, section 3.3:

- MRCONSO: CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
- MRSTY:   CUI|TUI|STN|STY|ATUI|CVF|
- MRREL:   CUI1|AUI1|STYPE1|REL|CUI2|AUI2|STYPE2|RELA|RUI|SRUI|SAB|SL|RG|DIR|SUPPRESS|CVF|

Filters: languages (``LAT``, default English), source vocabularies (``SAB``, default all), and suppression
(rows with ``SUPPRESS`` O, E or Y are dropped unless asked for). The preferred name is the row with TS=P, STT=PF,
ISPREF=Y. REL is "the relationship of the second concept to the first": a ``PAR`` row makes CUI2 a parent of CUI1;
``RO``/``RB``/``RN``/``RQ`` rows become relations named by RELA (or REL) from CUI2 to CUI1.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.records import Concept


def read_umls_rrf(
    path: Path,
    report: ReadReport,
    languages: Collection[str] = ("ENG",),
    vocabularies: Collection[str] | None = None,
    include_suppressed: bool = False,
    source: str | None = None,
) -> Iterator[Concept]:
    """Concept records, for compiling UMLS together with other sources (alone, it is compiled in columns)."""
    from medlink.terminology.readers.umls_columns import read_umls_columns

    yield from read_umls_columns(path, report, languages, vocabularies, include_suppressed, source)
