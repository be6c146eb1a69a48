"""The folder layout is the architecture: a room imports only rooms below it (nothing imports upward)."""

from __future__ import annotations

import ast
from pathlib import Path

import medlink

# Lowest first. Rooms on one line are side by side and do not import each other.
LAYERS = [
    ["errors"], ["folders"], ["text"], ["terminology"], ["resources"], ["encoders"], ["index"], ["linking"],
    ["evaluation"], ["training"], ["benchmark"], ["trials"], ["serve", "spacy", "spark"], ["api", "cli"], ["__main__"],
]  # fmt: skip
LEVEL = {room: level for level, rooms in enumerate(LAYERS) for room in rooms}


def imports_of(path: Path) -> set[str]:
    """The medlink rooms ``path`` imports from (``from medlink import __version__`` names no room)."""
    rooms = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("medlink."):
            rooms.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            rooms |= {a.name.split(".")[1] for a in node.names if a.name.startswith("medlink.")}
    return rooms


def test_no_room_imports_a_room_above_it() -> None:
    package = Path(medlink.__file__).parent
    upward = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).parts
        if len(parts) == 1 and parts[0] == "__init__.py":
            continue  # the package's front door re-exports the API
        room = parts[0].removesuffix(".py")
        assert room in LEVEL, f"{room} is a new room: place it in LAYERS"
        upward += [f"{path.relative_to(package)} imports medlink.{other}" for other in imports_of(path)
                   if other != room and LEVEL[other] >= LEVEL[room]]  # fmt: skip
    assert upward == []
