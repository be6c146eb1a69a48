"""Cycles in an ``is_a`` hierarchy given as integer nodes, found by an iterative depth-first search.

Shared by the builder (concept records) and the columnar UMLS compile (millions of rows), which break a cycle the
same way: by dropping the edge that closes it, visiting nodes in order and parents in the order given.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence


def closing_edges(parents_of: Sequence[Sequence[int]]) -> Iterator[tuple[int, int, list[int]]]:
    """``(node, parent, cycle)`` for each edge that closes a cycle; ``cycle`` runs from ``parent`` back to it."""
    count = len(parents_of)
    on_stack = bytearray(count)
    done = bytearray(count)
    for start in range(count):
        if done[start]:
            continue
        stack: list[tuple[int, int]] = [(start, 0)]
        path = [start]
        on_stack[start] = 1
        while stack:
            node, index = stack[-1]
            parents = parents_of[node]
            if index == len(parents):
                stack.pop()
                path.pop()
                on_stack[node] = 0
                done[node] = 1
                continue
            stack[-1] = (node, index + 1)
            parent = parents[index]
            if on_stack[parent]:
                yield node, parent, [*path[path.index(parent) :], parent]
            elif not done[parent]:
                stack.append((parent, 0))
                path.append(parent)
                on_stack[parent] = 1
