"""Structural keys of loop nests, computed before any code is emitted (``region_key``).

A top-level equation's unit (``units.py``) is the code of its *region*: the equation and
the fused equations feeding it (views and elementwise operations with no buffer of their
own). Two regions with the same key emit the same unit text up to the buffers they read
and write, so the outliner emits the first one and merely calls its unit for the others:
in a program repeating a block, lowering a loop nest costs a key and a call instead of a
walk through the lowering rules and the text's canonicalisation.

The key holds the region's equations (primitive, params, output types: shapes and dtypes)
in the order a depth-first walk meets them, how they feed one another, and its *leaves*:
a buffer (its type and a slot number: the call passes the slot's pointer), a scalar
folded into the code (its type and value) or a literal. The slots' pointers are returned
beside the key; which slots hold the same pointer is part of the full key (``units``).
"""
from __future__ import annotations

import numpy as np

from funcgrad.core.ir import Literal
from funcgrad.lowering.context import BufferOperand, ConstOperand


def _aval(a):
    return a.shape, a.dtype.str


def _literal(v):
    """A literal's value as a key: its bytes (-0.0 apart from 0.0)."""
    if type(v) is float:
        return v.hex()
    arr = np.asarray(v)
    return arr.dtype.str, arr.tobytes()


def region_key(e, env: dict, producer: dict, materialized, outs, extra=()):
    """(key, slot pointers) of the region ending in equation ``e``, or None when a leaf
    is not a buffer or a constant (a value in a register: its unit text is not reused).
    ``env``: operands by variable id; ``producer``: equation by output id;
    ``materialized``: ids of values with a buffer; ``outs``: the region's destination
    buffers; ``extra``: other hashable facts the code depends on (loop shape flags)."""
    slots: list = []
    nodes: dict = {}  # id(eqn) -> node number
    parts: list = []
    stack = [(e, False)]
    try:
        while stack:
            q, ready = stack.pop()
            if id(q) in nodes:
                continue
            if not ready:
                stack.append((q, True))
                for a in q.inputs:
                    p = producer.get(id(a)) if type(a) is not Literal else None
                    if p is not None and id(a) not in materialized and id(p) not in nodes:
                        stack.append((p, False))
                continue
            ins = []
            for a in q.inputs:
                if type(a) is Literal:
                    ins.append(("l", _aval(a.aval), _literal(a.val)))
                    continue
                p = producer.get(id(a))
                if p is not None and id(a) not in materialized:
                    ins.append(("n", nodes[id(p)], p.outputs.index(a)))
                    continue
                op = env[id(a)]
                if type(op) is BufferOperand:
                    ins.append(("b", _aval(a.aval), len(slots)))
                    slots.append(op.ptr)
                elif type(op) is ConstOperand:
                    ins.append(("c", _aval(a.aval), op.value.ref))
                else:
                    return None
            params = tuple(sorted(q.params.items())) if q.params else ()
            nodes[id(q)] = len(nodes)
            parts.append((q.primitive, params, tuple(_aval(v.aval) for v in q.outputs), tuple(ins)))
        for o in outs:
            if type(o) is not BufferOperand:
                return None
            parts.append(("out", _aval(o.aval), len(slots)))
            slots.append(o.ptr)
        key = (tuple(parts), tuple(extra))
        hash(key)
    except (TypeError, KeyError, ValueError, AttributeError):  # (unhashable params, a tape, ...)
        return None
    return key, slots
