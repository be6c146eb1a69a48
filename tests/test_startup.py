"""What a one-shot answer loads: ``import medlink`` and an exact match must not pull in torch, transformers,
scikit-learn, FAISS, ONNX Runtime or pandas (each costs a large share of a second, or of 250 MB). Checked in a fresh
interpreter, since this one has imported everything already. Times are measured by benchmarks/startup.py, not here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "sklearn", "faiss", "onnxruntime", "pandas")


def heavy_modules_after(code: str) -> list[str]:
    """The heavy modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_medlink_loads_nothing_heavy() -> None:
    assert heavy_modules_after("import medlink; medlink.Linker; medlink.LinkResult") == []


def warm_mesh() -> None:
    """Compile all of MeSH into the session's cache (which the child inherits) here: that first use, once per
    machine, converts Python lists to Arrow, which pyarrow does with pandas at hand; an answer does not."""
    from medlink.linking.spec import ExactMatch

    ExactMatch().warm()


def test_an_exact_match_loads_nothing_heavy() -> None:
    warm_mesh()
    code = (
        "from medlink import Linker\n"
        "assert Linker.load(exact_only=True).link('heart attack').concept_id == 'MESH:D009203'"
    )
    assert heavy_modules_after(code) == []


def test_the_command_line_exact_path_loads_nothing_heavy() -> None:
    warm_mesh()
    code = (
        "from medlink.cli import main\n"
        "try:\n    main(['link', '--exact-only', 'heart attack'], standalone_mode=False)\n"
        "except SystemExit:\n    pass"
    )
    assert heavy_modules_after(code) == []


@pytest.mark.slow  # the embedded default's index is built on first use
def test_the_default_linker_answers_an_exact_match_without_its_encoder_or_faiss() -> None:
    from medlink.linking.spec import EmbeddedDefault

    EmbeddedDefault().warm()  # the index and all of MeSH built here (in the session's cache, which the child inherits)
    code = (
        "from medlink import Linker\n"
        "result = Linker.load().link('heart attack')\n"
        "assert result.concept_id == 'MESH:D009203' and result.stage.value == 'exact'"
    )
    assert heavy_modules_after(code) == []
