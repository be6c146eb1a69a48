"""The folder layout is the architecture (docs/ARCHITECTURE.md): a room imports only rooms below it, the rooms inside
linking/ and trials/ too, and no two modules import each other, directly or around a circle — counting imports made
inside functions, which hide a circle without removing it."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import medlink

PACKAGE = Path(medlink.__file__).parent

# Lowest first. Rooms on one line are side by side and do not import each other.
LAYERS = [
    ["errors"],
    ["version", "resources", "options"],
    ["folders", "models", "processes"],
    ["text"],
    ["terminology"],
    ["encoders"],
    ["index"],
    ["linking"],
    ["evaluation"],
    ["training"],
    ["benchmark"],
    ["trials"],
    ["serve", "spacy", "spark"],
    ["api", "cli"],
    ["__main__"],
]
# The rooms inside a room, lowest first (a module at a room's top is a room of its own).
INNER_LAYERS = {
    "linking": [
        ["results"],
        ["settings"],
        ["sieves"],
        ["mentions"],
        ["rerank"],
        ["sets"],
        ["decisions"],
        ["annotation"],
        ["prebuilt"],
        ["defaults"],
        ["default_update"],
        ["pipeline"],
        ["spec"],
        ["linker"],
    ],
    "trials": [["criteria"], ["records"], ["readers"], ["normalization"], ["matching"]],
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: Path) -> set[str]:
    """The medlink modules ``path`` imports, anywhere in it (``from medlink.x import y`` names ``medlink.x.y`` when
    that is a module, else ``medlink.x``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "medlink":
            found |= {
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module for a in node.names
            }
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "medlink"}
    return found


def levels(layers: list[list[str]]) -> dict[str, int]:
    return {room: level for level, rooms in enumerate(layers) for room in rooms}


def upward_imports(room_of: dict[str, str], level: dict[str, int]) -> list[str]:
    """Each import of a module in ``room_of`` that reaches a room at its own level or above."""
    upward = []
    for module, room in room_of.items():
        for other in imported_modules(MODULES[module]):
            other_room = room_of.get(other)
            if other_room is not None and other_room != room and level[other_room] >= level[room]:
                upward.append(f"{module} ({room}) imports {other} ({other_room})")
    return upward


def test_no_room_imports_a_room_above_it() -> None:
    room_of = {name: name.split(".")[1] for name in MODULES if name != "medlink"}  # the front door re-exports
    level = levels(LAYERS)
    new = sorted({room for room in room_of.values() if room not in level})
    assert new == [], f"new rooms: place them in LAYERS: {new}"
    assert upward_imports(room_of, level) == []
    assert [name for name in room_of if "medlink" in imported_modules(MODULES[name])] == []  # the front door is top


def test_no_room_inside_linking_or_trials_imports_one_above_it() -> None:
    for outer, layers in INNER_LAYERS.items():
        prefix = f"medlink.{outer}."
        room_of = {name: name.removeprefix(prefix).split(".")[0] for name in MODULES if name.startswith(prefix)}
        level = levels(layers)
        new = sorted({room for room in room_of.values() if room not in level})
        assert new == [], f"new rooms in {outer}/: place them in INNER_LAYERS: {new}"
        assert upward_imports(room_of, level) == []


def import_circles() -> list[list[str]]:
    """The groups of modules that reach each other through imports (Tarjan's strongly connected components)."""
    graph = {name: sorted(imported_modules(path) & MODULES.keys()) for name, path in MODULES.items()}
    order: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        order[module] = lowest[module] = len(order)
        stack.append(module)
        for other in graph[module]:
            if other not in order:
                visit(other)
                lowest[module] = min(lowest[module], lowest[other])
            elif other in stack:
                lowest[module] = min(lowest[module], order[other])
        if lowest[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in graph:
        if module not in order:
            visit(module)
    return circles


def test_no_import_circle_between_modules() -> None:
    assert import_circles() == []


def test_the_circle_check_sees_a_circle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The check itself, on two modules that import each other inside functions.
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("def f():\n    from medlink.b import g\n", encoding="utf-8")
    b.write_text("def g():\n    import medlink.a\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "MODULES", {"medlink.a": a, "medlink.b": b})
    assert import_circles() == [["medlink.a", "medlink.b"]]
