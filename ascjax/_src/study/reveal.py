"""Reveal the summation tree of a black-box sum from crafted inputs (after FPRev, ATC'25).

Put a big value M at input i, -M at input j and a small value s everywhere else. If M is big
enough that M + k*s rounds back to M for every partial count k, each s that meets M or -M
before they cancel is absorbed; M and -M meet, and cancel to 0, at the lowest common ancestor
of leaves i and j. Every other s survives, so the sum is ``(n - size(LCA(i, j))) * s``: one call
measures the size of the subtree that joins i and j.

Querying a leaf r against every other leaf j of a set gives the chain of subtrees containing
r (those j with the same size hang off the same ancestor). The leaves hanging off one
ancestor are a union of its other children, which the same query splits recursively. All the
queries of one round go to ``sum_fn`` as one batch; a round never needs more than n - 1 rows,
and a sequential sum is revealed in a single round.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..formats import finfo, resolve
from .precision import check_args

Tree = Any  # an int (a leaf: input index) or a tuple of trees, children ordered by least leaf


def probe_values(dtype: Any) -> tuple[float, float]:
    """(M, s) for inputs of ``dtype``: M its largest power of two, s its least subnormal
    for half (absorbed by M even in a float32 accumulator), else 1."""
    info = finfo(resolve(dtype, where="reveal_order"))
    small = info.smallest_subnormal if info.nexp <= 5 else 1.0
    return 2.0 ** (info.maxexp - 1), small


def reveal_order(sum_fn: Callable, n: int, *, dtype: Any = "float", batched: bool = True,
                 big: float | None = None, small: float | None = None) -> Tree:
    """The summation tree of ``sum_fn`` over n inputs, as nested tuples of input indices.

    ``sum_fn(x)`` takes an array ``(rows, n)`` of ``dtype`` (NumPy storage dtype) and returns
    the ``rows`` sums of its last axis; with ``batched=False`` it takes one ``(n,)`` row at a
    time. Examples: ``((0, 1), (2, 3))`` for adjacent pairs of four, ``(((0, 1), 2), 3)`` for a
    sequential sum. A node with more than two children is a multi-operand add. Children are
    ordered by their least leaf (the operand order of an add cannot be seen).

    Assumes, as FPRev does, that the sum is a fixed tree of adds; ``big`` (M) and ``small``
    (s) default to ``probe_values(dtype)``: M + k*s must round to M and the sum of k values s
    must be exact in the accumulator, for every k < n (for float: n <= 2^24; half: n <= 2^11;
    bfloat16: n <= 2^8). Raises ValueError if the answers fit no tree.

    >>> import numpy as np
    >>> reveal_order(lambda x: np.sum(x, axis=-1), 4)  # below 8 elements NumPy goes in order
    (((0, 1), 2), 3)
    """
    fmt = resolve(dtype, where="reveal_order")
    check_args("reveal_order", n=n)  # refuses bool (an int subclass) and non-ints
    n = int(n)
    default_big, default_small = probe_values(fmt)
    big = default_big if big is None else big
    small = default_small if small is None else small

    rows = max(n - 1, 1)

    def measure(pairs: list[tuple[int, int]]) -> np.ndarray:
        """size(LCA(i, j)) for each pair (one call of sum_fn)."""
        # Always n - 1 rows (padding rows hold only s): a compiled sum may pick its order by
        # shape, so every call must have the same one.
        x = np.full((rows, n), small, dtype=np.float64)
        k = np.arange(len(pairs))
        x[k, [i for i, _ in pairs]] = big
        x[k, [j for _, j in pairs]] = -big
        x = x.astype(fmt.storage_dtype)
        if batched:
            out = np.asarray(sum_fn(x)).astype(np.float64).reshape(-1)
        else:
            out = np.array([np.asarray(sum_fn(row)).astype(np.float64) for row in x[:len(pairs)]])
        if out.shape[0] < len(pairs):
            raise ValueError(f"reveal_order: sum_fn returned {out.shape[0]} sums for "
                             f"{rows} rows")
        count = out[:len(pairs)] / small
        if not np.all(np.isfinite(count)) or np.any(count != np.round(count)) or np.any(
                (count < 0) | (count > n - 2)):
            raise ValueError("reveal_order: sum_fn's results are not whole numbers of the small "
                             "probe value in [0, n - 2]: it is not a fixed tree of adds, or "
                             "big/small do not suit its accumulator")
        return n - count.astype(int)

    # A task: leaves D known to be the union of some children of a node of size `parent`
    # (the root task: all leaves, parent n + 1). It returns those children as trees.
    tasks: dict[int, tuple[list[int], int]] = {0: (list(range(n)), n + 1)}
    results: dict[int, tuple] = {}
    pending = [0]
    while pending:
        pairs, owners = [], []
        for t in pending:
            leaves, _ = tasks[t]
            pairs += [(leaves[0], j) for j in leaves[1:]]
            owners += [t] * (len(leaves) - 1)
        sizes = measure(pairs) if pairs else np.zeros(0, int)
        nxt = []
        for t in pending:
            leaves, parent = tasks[t]
            mine = sizes[[k for k, o in enumerate(owners) if o == t]]
            rep, others = leaves[0], leaves[1:]
            if np.any(mine > parent):
                raise ValueError("reveal_order: inconsistent subtree sizes; sum_fn is not a tree")
            inside = [(s, j) for s, j in zip(mine, others, strict=True) if s < parent]
            rest = [j for s, j in zip(mine, others, strict=True) if s == parent]
            chain = []  # (ancestor size, task id of the leaves hanging off it)
            for size in sorted({s for s, _ in inside}):
                group = [j for s, j in inside if s == size]
                tid = len(tasks)
                tasks[tid] = (group, size)
                chain.append((size, tid))
                nxt.append(tid)
            if chain and chain[-1][0] != len(inside) + 1:
                raise ValueError("reveal_order: inconsistent subtree sizes; sum_fn is not a tree")
            rest_id = None
            if rest:
                rest_id = len(tasks)
                tasks[rest_id] = (rest, parent)
                nxt.append(rest_id)
            results[t] = (rep, chain, rest_id)
        pending = nxt
    return _assemble(results, tasks)[0]


def _assemble(results: dict, tasks: dict) -> tuple:
    """Trees of every task, children first (task ids grow with depth)."""
    built: dict[int, list] = {}
    for t in sorted(results, reverse=True):
        rep, chain, rest_id = results[t]
        node: Tree = rep
        covered = 1
        for size, tid in chain:
            node = _node([node, *built[tid]])
            covered += len(tasks[tid][0])
            if covered != size:
                raise ValueError("reveal_order: inconsistent subtree sizes; sum_fn is not a tree")
        built[t] = [node] + (built[rest_id] if rest_id is not None else [])
    return tuple(built[0])


def _node(children: list) -> tuple:
    return tuple(sorted(children, key=least_leaf))


def least_leaf(tree: Tree) -> int:
    while not isinstance(tree, (int, np.integer)):
        tree = tree[0]
    return int(tree)


def leaves(tree: Tree) -> list[int]:
    """Input indices in the order the tree lists them (left to right)."""
    out, stack = [], [tree]
    while stack:
        t = stack.pop()
        if isinstance(t, (int, np.integer)):
            out.append(int(t))
        else:
            stack += list(reversed(t))
    return out
