"""Structured control flow, mirroring JAX's ``lax/control_flow``: ``cond``/``switch``
(``cond.py``), ``scan`` (``scan.py``), ``while_loop``/``fori_loop`` (``while_loop.py``),
and the rules of the run-time tape primitives that reverse mode through a staged
``while_loop`` produces (``tapes.py``, ``tape_scan.py``; the tape model is in
``funcgrad/tapes.py``).

The primitives (``cond``, ``while``, ``scan``) are declared in
``funcgrad/core/prims/control_flow.py``; their transform rules rewrite the sub-jaxprs
with the interpreters, so they live here, beside them.
"""
from funcgrad.transforms.control_flow.cond import cond, switch
from funcgrad.transforms.control_flow.scan import scan
from funcgrad.transforms.control_flow.while_loop import fori_loop, while_loop

__all__ = ["cond", "switch", "scan", "while_loop", "fori_loop"]
