"""Which equations of a staged program are the backward part of a ``grad``/``vjp``.

The criterion: an equation is *backward* when it was recorded while funcgrad's reverse-
mode walker (``transforms.transpose.backward_walk``) ran, i.e. it was emitted by a
transpose or cotangent rule applied to cotangents (JAX's name stack marks the same
equations ``transpose(jvp(...))``). Everything else (the primal computation and the
residuals the linearization saved) is *forward*. The sub-jaxprs of a backward
equation (a transposed ``cond`` or ``scan``, say) are backward as a whole.

This is decided while tracing, not from the finished jaxpr: the cotangent seed of
``grad`` is the constant ``1.0``, which dataflow from the seed could not tell from any
other constant. ``BackwardMarks`` is entered around the trace; each walk that starts
notes how many equations every staging builder on the trace stack holds, and when it
ends, the equations appended since are marked (by the identity of their ``outputs``
list, which ``JaxprBuilder.build`` keeps when it rewrites literals).
"""
from __future__ import annotations

import contextlib

from funcgrad.core.staging import JaxprBuilder
from funcgrad.core.trace import active_mains
from funcgrad.transforms.transpose import walk_observers


class BackwardMarks:
    """Context manager: while active, records the equations every reverse-mode walk
    stages. ``is_backward(eqn)`` asks afterwards."""

    def __init__(self):
        self._depth = 0
        self._start: list = []
        self._marked: dict[int, list] = {}  # id(eqn.outputs) -> that list (kept alive: ids stay unique)

    @contextlib.contextmanager
    def _walk(self):
        if self._depth == 0:  # nested walks (a transposed loop body) are inside the outer one
            self._start = [(m.payload, len(m.payload.eqns)) for m in active_mains()
                           if isinstance(m.payload, JaxprBuilder)]
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                for builder, n in self._start:
                    for e in builder.eqns[n:]:
                        self._marked[id(e.outputs)] = e.outputs
                self._start = []

    def __enter__(self):
        walk_observers.append(self._walk)
        return self

    def __exit__(self, *exc):
        walk_observers.remove(self._walk)
        return False

    def is_backward(self, eqn) -> bool:
        return id(eqn.outputs) in self._marked

    def __bool__(self):
        return bool(self._marked)
