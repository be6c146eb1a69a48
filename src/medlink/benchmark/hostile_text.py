"""Text shaped to find the paths that are not linear: used by the complexity test (``tests/test_complexity.py``)
and by the hostile-load benchmark's attacker (``benchmarks/hostile_load.py``).

Each family makes a text of exactly ``n`` characters from a shape that once made some path quadratic: runs of
blanks (a leading ``\\s*`` tried from every blank), brackets (a pattern that looks for the closer from every
opener), short-form definitions (the abbreviation search), one word repeated (per-finding work over the whole
clause), NFKC-expanding characters (U+FDFA is 18 characters after NFKC), one unbroken word, text without a
sentence end (look-backs to the top of the document), and a quoted run of backslashes (``http.cookies`` unquotes
it in quadratic time: CVE-2024-7592).
"""

from __future__ import annotations

from collections.abc import Callable


def _repeated(unit: str) -> Callable[[int], str]:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


FAMILIES: dict[str, Callable[[int], str]] = {
    "blanks": lambda n: "a" + " " * max(0, n - 2) + "b" if n > 1 else "a"[:n],
    "brackets": _repeated("(["),
    "short forms": _repeated("x(Q0001)y "),
    "one word repeated": _repeated("asthma "),
    "nfkc expanding": _repeated("\ufdfa"),
    "unbroken word": _repeated("a"),
    "no sentence end": _repeated("no asthma and "),
    "quoted escapes": lambda n: ('a="' + "\\" * max(0, n - 4) + '"')[:n],
}
