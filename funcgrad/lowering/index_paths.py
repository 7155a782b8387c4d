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
most ``MAX_PATHS`` times per loop (a cheap rule reading only buffers excepted: an
address computation, a load and an operation, which a buffer of its own would not
save), and a program's code grows with its equations, not with the product of its layout
rules' fan-outs.

An operand of control flow (``cond``, ``while``, ``scan``) is read by code ``plan`` does
not see: anywhere in the branches and bodies, in every iteration. Unless it only moves
elements of buffers (a reshape, a transpose...), it gets a buffer too: computed once, and
its constants stay out of the control flow's code (``expm(q * t)`` for six ``t`` made
six different copies of the whole expm; now one, shared: ``units.py``).
"""
from __future__ import annotations

import math

from funcgrad.core.ir import Var
from funcgrad.core.prims import structural as st
from funcgrad.lowering.context import FLAT_PRIMS, VIEW_PRIMS

# More distinct positions than this, in one loop, and a fused value gets a buffer: its
# code (with all of its fused operands) would be emitted once per position.
MAX_PATHS = 4
_START = frozenset({0})  # the loop's own position
# layout rules that only move elements (and iota): an operand of control flow made by
# these from buffers is read in place (a copy would cost a pass over it, saving nothing)
_MOVES = {st.broadcast_in_dim_p, st.reshape_p, st.transpose_p, st.rev_p, st.slice_p, st.iota_p}
# view primitive -> predicate(eqn, k): does its rule read operand ``k`` at the output
# element's own flat offset (as an elementwise rule does)? Registered beside the rules.
SAME_POSITION: dict = {}


class IndexPaths:
    """The index paths of the fused values of one plan, decided from the last equation
    back (``compiler.plan``): ``paths[vid]`` maps each loop (root) evaluating the value
    ``vid`` to the set of ids of the paths it reads ``vid`` through."""

    def __init__(self, eqns, consumers, materialized, produced_at):
        self.eqns, self.consumers, self.materialized = eqns, consumers, materialized
        self.produced_at = produced_at
        self.paths: dict[int, dict] = {}
        self._ids: dict[tuple, int] = {}

    def too_many(self, v, eqn, lazy: bool, cheap: bool) -> bool:
        """Record the paths of ``v`` (made by ``eqn``; its readers are decided; ``lazy``:
        the caller reads it after the last equation too) and say whether a buffer should
        cut them: more than ``MAX_PATHS`` in some loop, and ``v`` is an expensive rule or
        reads a fused value (a cheap rule reading buffers costs no more than a buffer)."""
        eqns, mat = self.eqns, self.materialized
        reads = {("end",): _START} if lazy else None
        for c in self.consumers[id(v)]:
            if eqns[c].primitive.jaxpr_params and math.prod(v.aval.shape) > 1 and not self._moves_only(eqn):
                # (a branch or loop body reads it wherever and as often as it likes, in
                # every iteration: computed once. This also keeps the fused operation's
                # constants, e.g. the ``t`` of ``expm(q * t)``, out of the code of the
                # control flow, which the equal code of the other ``t`` then shares)
                self.paths[id(v)] = {}
                return True
            outs = eqns[c].outputs
            if not outs:  # (an effect: evaluates it in place)
                at = {("eqn", c): _START}
            else:
                u = id(outs[0])
                at = {u: _START} if u in mat else self.paths[u]
            reads = _merge(reads, self._of_read(v, c, eqns[c], at))
        if not reads or math.prod(v.aval.shape) <= 1:  # (one element: one position)
            self.paths[id(v)] = {}
            return False
        self.paths[id(v)] = reads
        if all(len(s) <= MAX_PATHS for s in reads.values()):
            return False
        return not cheap or self._reads_fused(eqn)

    def _moves_only(self, eqn) -> bool:
        """Is ``eqn``'s value a chain of ``_MOVES`` (at most 16) over non-view values?"""
        at, todo = self.produced_at, [eqn]
        for _ in range(16):
            if not todo:
                return True
            e = todo.pop()
            if e.primitive not in _MOVES:
                return False
            todo += [self.eqns[at[id(a)]] for a in e.inputs if type(a) is Var and id(a) in at
                     and self.eqns[at[id(a)]].primitive in VIEW_PRIMS]
        return False

    def _reads_fused(self, eqn) -> bool:
        """Does ``eqn`` read a value a view rule makes (fused, unless it gets a buffer)?"""
        at = self.produced_at
        return any(type(a) is Var and id(a) in at and self.eqns[at[id(a)]].primitive in VIEW_PRIMS
                   for a in eqn.inputs)

    def _of_read(self, v, c: int, eqn, root_paths) -> dict:
        """The paths through which equation ``c`` (``eqn``) reads ``v``, given the paths
        ``root_paths`` of its own output."""
        prim = eqn.primitive
        pred = FLAT_PRIMS.get(prim)
        if prim in VIEW_PRIMS and pred is not None and pred(eqn):
            return root_paths  # (an elementwise rule reads at its own position)
        positions = [k for k, a in enumerate(eqn.inputs) if a is v]
        same = SAME_POSITION.get(prim)
        if same is not None and all(same(eqn, k) for k in positions):
            return root_paths
        return {r: frozenset([self._step(pid, c, k) for pid in s for k in positions])
                for r, s in root_paths.items()}

    def _step(self, pid: int, c: int, pos: int) -> int:
        """The id of path ``pid`` followed by operand ``pos`` of equation ``c``."""
        key = (pid, c, pos)
        new = self._ids.get(key)
        if new is None:
            new = self._ids[key] = len(self._ids) + 1
        return new


def _merge(a: dict | None, b: dict) -> dict:
    if a is None or a is b:
        return b
    out = dict(a)
    for r, s in b.items():
        old = out.get(r)
        out[r] = s if old is None or old is s else old | s
    return out
