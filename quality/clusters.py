"""Clusters of duplicates: union-find for long texts, star clusters for short ones.

Positions are indices in the keep order (the first of a cluster is the one kept), so every root
is its cluster's smallest index and the result does not depend on the order pairs arrive in.

Union-find joins any two sets linked by a confirmed pair (single link). For long texts that is
safe: two texts at Jaccard >= 0.8 share most of their content, and chains are rare. Short texts
chain easily: a canned command and its one-line answer, with one argument changed, is 0.8-similar
to its neighbour's, and single link would then join a whole family of different runs through
their boilerplate. Short texts therefore form *stars*: walking in keep order, a text that no
earlier centre has taken becomes a centre and takes its confirmed neighbours; a member is always
within the threshold of the member that is kept, never only of some other member.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def find(parent: np.ndarray, i: int) -> int:
    """Root of i, halving the path on the way."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def union(parent: np.ndarray, i: int, j: int) -> None:
    """Join two sets; the root is the smaller index, i.e. the member the keep rule prefers."""
    ri, rj = find(parent, i), find(parent, j)
    if ri != rj:
        parent[max(ri, rj)] = min(ri, rj)


def star_edges(pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The (centre, member) edges of greedy star clustering over confirmed pairs."""
    neighbours: dict[int, list[int]] = {}
    for a, b in pairs:
        lo, hi = min(a, b), max(a, b)
        neighbours.setdefault(lo, []).append(hi)
    taken: set[int] = set()
    edges = []
    for centre in sorted(neighbours):
        if centre in taken:
            continue  # a member of an earlier star cannot be a centre too
        for member in sorted(set(neighbours[centre])):
            if member not in taken:
                taken.add(member)
                edges.append((centre, member))
    return edges
