"""Pseudo-projective parsing (Nivre & Nilsson 2005), "head" encoding.

`lift` makes a tree projective: while an arc is non-projective, the shortest
such arc is moved up to its head's head, and its label records the label of
the arc into the real head ("dep||headlabel"). A projective parser learns
these labels; `lower` puts such arcs back: it searches the current head's
descendants, breadth first and left to right, for a node whose arc has the
recorded label, and attaches the dependent there.

Trees are lists over the nodes 0..n: heads[0] is -1 (the root), every other
head is in 0..n; labels[0] is unused.
"""

from collections import deque
from collections.abc import Sequence
from typing import Optional

SEPARATOR = "||"


def _is_descendant(heads: Sequence[int], node: int, ancestor: int) -> bool:
    while node > 0:
        node = heads[node]
        if node == ancestor:
            return True
    return ancestor == 0 and node == 0


def is_projective_arc(heads: Sequence[int], dependent: int) -> bool:
    """Is every node between the dependent and its head a descendant of the head?"""
    head = heads[dependent]
    low, high = sorted((head, dependent))
    return all(_is_descendant(heads, k, head) for k in range(low + 1, high))


def non_projective_arcs(heads: Sequence[int]) -> list[int]:
    """The dependents whose arcs are not projective."""
    return [d for d in range(1, len(heads)) if not is_projective_arc(heads, d)]


def is_projective(heads: Sequence[int]) -> bool:
    return not non_projective_arcs(heads)


def lift(heads: Sequence[int], labels: Sequence[str]) -> tuple[list[int], list[str]]:
    """The projective tree and augmented labels; the input is left as it is."""
    heads, labels = list(heads), list(labels)
    real_head_label = {}
    while True:
        arcs = non_projective_arcs(heads)
        if not arcs:
            break
        dependent = min(arcs, key=lambda d: (abs(heads[d] - d), d))
        head = heads[dependent]
        if dependent not in real_head_label:
            real_head_label[dependent] = labels[head] if head > 0 else None
        heads[dependent] = heads[head]
    for dependent, head_label in real_head_label.items():
        if head_label is not None:
            labels[dependent] = f"{labels[dependent]}{SEPARATOR}{head_label}"
    return heads, labels


def split_label(label: str) -> tuple[str, Optional[str]]:
    """("dep", "headlabel") of an augmented label, ("dep", None) of a plain one."""
    dep, separator, head_label = label.partition(SEPARATOR)
    return dep, (head_label if separator else None)


def lower(heads: Sequence[int], labels: Sequence[str]) -> tuple[list[int], list[str]]:
    """Move each arc with an augmented label down to a descendant of its head
    with the recorded label; every label comes out plain."""
    heads, labels = list(heads), list(labels)
    children: list[list[int]] = [[] for _ in heads]
    for d in range(1, len(heads)):
        children[heads[d]].append(d)
    for dependent in _top_down(children):
        dep, head_label = split_label(labels[dependent])
        labels[dependent] = dep
        if head_label is None:
            continue
        new_head = _search(children, labels, heads[dependent], dependent, head_label)
        if new_head is not None:
            children[heads[dependent]].remove(dependent)
            children[new_head].append(dependent)
            children[new_head].sort()
            heads[dependent] = new_head
    return heads, labels


def _top_down(children: list[list[int]]) -> list[int]:
    order, queue = [], deque([0])
    while queue:
        node = queue.popleft()
        order.extend(children[node])
        queue.extend(children[node])
    return order


def _search(children, labels, head: int, dependent: int, wanted: str) -> Optional[int]:
    """The first descendant of head (breadth first, left to right), outside the
    dependent's own subtree, whose arc carries the wanted label."""
    queue = deque(child for child in children[head] if child != dependent)
    while queue:
        node = queue.popleft()
        if split_label(labels[node])[0] == wanted:
            return node
        queue.extend(child for child in children[node] if child != dependent)
    return None
