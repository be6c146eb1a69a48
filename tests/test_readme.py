"""The README runs as written: every ```bash and ```python block, pasted as a user would — bash blocks as one shell
script each, Python blocks as script files run by a fresh interpreter — in one scratch folder beside a ``shared``
link (so ``../shared/data/...`` means what it means in a checkout) with one empty cache, in the README's order: a
block may use what an earlier one made (``medic/``), as a reader pasting them in turn would, so run the file whole.

A block that cannot run here says why on the line above it: ``<!-- doc: not run: REASON -->``; the blocks of
``<!-- ci:main -->`` and ``<!-- ci:test -->`` are what .ci/run runs. A comment ending ``→ TEXT`` on a line says what
the block prints: ``TEXT`` must appear in its output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import SHARED_DATA

README = Path(__file__).resolve().parents[1] / "README.md"
NOT_RUN = re.compile(r"<!-- doc: not run: (?P<reason>.+?) -->")
RUN_BY_CI = re.compile(r"<!-- ci:(main|test) -->")
EXPECTED = re.compile(r"#[^#]*?→\s*(?P<text>.+?)\s*$")


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence
    language: str
    code: str
    skipped: str | None  # why it is not run here, if it is not

    @property
    def expected_at(self) -> list[tuple[int, str]]:
        """(line within the block, text) for each ``→ TEXT`` the block states."""
        return [
            (number, match["text"])
            for number, line in enumerate(self.code.splitlines())
            if (match := EXPECTED.search(line))
        ]


def readme_blocks(text: str) -> list[Block]:
    """The README's bash and python blocks, in order, each with the marker on the line above it."""
    lines, blocks, index = text.splitlines(), [], 0
    while index < len(lines):
        fence = re.fullmatch(r"```(\w+)", lines[index].strip())
        if fence is None:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == "```")
        above = lines[index - 1] if index else ""
        skipped = (
            "run by .ci/run"
            if RUN_BY_CI.search(above)
            else match["reason"]
            if (match := NOT_RUN.search(above))
            else None
        )
        if fence[1] in ("bash", "python"):
            blocks.append(Block(index + 1, fence[1], "\n".join(lines[index + 1 : end]) + "\n", skipped))
        index = end + 1
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_every_block_is_one_this_test_runs_or_says_why_not() -> None:
    fences = [
        line.strip()[3:]
        for line in README.read_text(encoding="utf-8").splitlines()
        if re.fullmatch(r"```\w+", line.strip())
    ]
    assert fences and set(fences) <= {"bash", "python"}, f"README blocks in a language not run here: {set(fences)}"
    assert len(BLOCKS) == len(fences)
    assert sum(block.skipped is None for block in BLOCKS) >= len(BLOCKS) - 4  # the README stays mostly runnable


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out like a checkout beside ``shared/``: ``work/`` (where blocks run) and ``shared``."""
    root = tmp_path_factory.mktemp("readme")
    (root / "work").mkdir()
    (root / "shared").symlink_to(SHARED_DATA.parent)
    return root / "work"


MARK = "@@readme-command-ends-at-line-{}@@"


def with_marks(code: str) -> str:
    """A bash block that says, after each command, where it ended: each ``→ TEXT`` is looked for in the output of
    the command it is written beside, not anywhere in the block's."""
    lines = []
    for number, line in enumerate(code.splitlines()):
        lines.append(line)
        if line.strip() and not line.strip().startswith("#") and not line.rstrip().endswith("\\"):
            lines.append(f"echo {MARK.format(number)}")
    return "\n".join(lines) + "\n"


def outputs_by_line(code: str, stdout: str) -> dict[int, str]:
    """Line number in ``code`` → the output of the command that line belongs to (bash blocks run with marks)."""
    pieces = re.split(MARK.replace("{}", r"(\d+)"), stdout)
    ends = {int(end): text for text, end in zip(pieces[0::2], pieces[1::2], strict=False)}
    owner, by_line = None, {}
    for number in sorted(range(len(code.splitlines())), reverse=True):
        owner = number if number in ends else owner
        by_line[number] = ends.get(owner, "") if owner is not None else ""
    return by_line


def run_block(block: Block, folder: Path) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "MEDLINK_CACHE": str(folder.parent / "cache"),
        "PYSPARK_PYTHON": sys.executable,
    }
    if block.language == "bash":
        command = ["bash", "-euo", "pipefail", "-c", with_marks(block.code)]
    else:
        script = folder / f"readme_line_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        command = [sys.executable, script.name]
    return subprocess.run(command, cwd=folder, env=environment, capture_output=True, text=True, timeout=1200)


@pytest.mark.slow  # the blocks together take a few minutes (one builds an index of CTD MEDIC)
@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: f"{block.language}-line-{block.line}")
def test_the_readme_block_runs_as_pasted(block: Block, scratch: Path) -> None:
    if block.skipped:
        pytest.skip(f"README line {block.line}: {block.skipped}")
    if "../shared/data" in block.code and not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not beside the checkout")
    done = run_block(block, scratch)
    assert done.returncode == 0, f"README line {block.line} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    if block.language == "bash":
        output = outputs_by_line(block.code, done.stdout)
        missing = [
            f"{text!r} (line {block.line + 1 + number})"
            for number, text in block.expected_at
            if text not in output[number]
        ]
    else:  # a script's prints cannot be told apart by line: each in turn, after the one before
        at, missing = 0, []
        for _, text in block.expected_at:
            found = done.stdout.find(text, at)
            missing += [repr(text)] if found < 0 else []
            at = found + len(text) if found >= 0 else at
    assert missing == [], f"README line {block.line} printed no {missing}:\n{done.stdout[-3000:]}"
