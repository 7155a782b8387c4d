"""Index paths: at how many different positions a loop nest reads a fused value (``compiler.plan``).

A fused value's code is emitted once per position a loop asks for (``LazyOperand``
memoises per position, so an elementwise chain reading ``x`` twice at the loop's own
position emits ``x`` once). Layout rules change the position: ``concatenate`` reads every
part (clamped, then selects), ``slice``/``pad``/``rev``/``broadcast`` move it. A value
reached through several such rules is emitted once per distinct chain of them between
it and the loop, its *index paths*, and those multiply along the program: a parallel
prefix scan (``lax.associative_scan``) reads each level's result through both halves of
the next level's interleave, so a value ``k`` levels below the loop was emitted ``2^k``
times, and a scan of 200 steps gave a function of tens of thousands of instructions.

``plan`` counts, for each fused value, its index paths per loop (an over-count: two
chains may land on the same position) and gives a value read through too many of them a
buffer of its own, which resets the count below it. So every fused value is emitted at
most ``MAX_PATHS`` (``MAX_PATHS_CHEAP`` for a layout op or another cheap rule) times per
loop, and a program's code grows with its equations, not with the product of its layout
rules' fan-outs.
"""
from __future__ import annotations

from funcgrad.lowering.context import FLAT_PRIMS, VIEW_PRIMS

# More distinct positions than this, in one loop, and a fused value gets a buffer: its
# code (with all of its fused operands) would be emitted once per position.
MAX_PATHS = 4
MAX_PATHS_CHEAP = 4  # for cheap rules (layout ops, negation...): index arithmetic only
_START = frozenset({0})  # the loop's own position


class IndexPaths:
    """The index paths of the fused values of one plan: ``paths[vid]`` maps each loop
    (root) evaluating value ``vid`` to the set of path ids it reads ``vid`` through."""

    def __init__(self):
        self.paths: dict[int, dict] = {}
        self._ids: dict[tuple, int] = {}

    def _step(self, pid: int, c: int, pos: int) -> int:
        """The id of path ``pid`` followed by operand ``pos`` of equation ``c``."""
        key = (pid, c, pos)
        new = self._ids.get(key)
        if new is None:
            new = self._ids[key] = len(self._ids) + 1
        return new

    def of_read(self, v, c: int, eqn, root_paths) -> dict:
        """The paths through which equation ``c`` (``eqn``) reads ``v``, given the paths
        ``root_paths`` of its own output (``{root: _START}`` for a loop of its own)."""
        pred = FLAT_PRIMS.get(eqn.primitive)
        if eqn.primitive in VIEW_PRIMS and pred is not None and pred(eqn):
            return root_paths  # (an elementwise rule reads at its own position)
        positions = [k for k, a in enumerate(eqn.inputs) if a is v]
        return {r: frozenset([self._step(pid, c, k) for pid in s for k in positions])
                for r, s in root_paths.items()}

    @staticmethod
    def start(root) -> dict:
        return {root: _START}

    @staticmethod
    def merge(a: dict | None, b: dict) -> dict:
        if a is None or a is b:
            return b
        out = dict(a)
        for r, s in b.items():
            old = out.get(r)
            out[r] = s if old is None or old is s else old | s
        return out

    @staticmethod
    def too_many(paths: dict, cheap: bool) -> bool:
        """Is the value read through more paths in one loop than its kind allows?"""
        limit = MAX_PATHS_CHEAP if cheap else MAX_PATHS
        return any(len(s) > limit for s in paths.values())
