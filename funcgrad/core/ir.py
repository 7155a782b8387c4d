"""The typed IR ("jaxpr"): variables, literals, equations and the printer.

Text form (stable and diffable; tests keep golden copies)::

    { lambda c:f64[3] ; a:f64[3] b:f64[]. let
        d:f64[3] = mul a c
      in (d,) }

Variables are identity-based; names are given by the printer in order of first
appearance, so equal programs print equally.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from funcgrad.core.avals import ShapedArray


class Var:
    """A value in a jaxpr, bound exactly once. Identity-based; unnamed until printed."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline, e.g. ``2.0:f64[]``."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({_literal_str(self)})"


def _literal_str(lit: Literal) -> str:
    if np.shape(lit.val) != ():  # ill-formed, but printable so the type checker can report it
        return f"{np.asarray(lit.val)!r}:{lit.aval.str_short()}"
    v = np.asarray(lit.val).item() if not isinstance(lit.val, (bool, int, float, complex)) else lit.val
    if isinstance(v, bool) or lit.aval.dtype == np.bool_:
        text = "True" if v else "False"
    elif lit.aval.dtype.kind == "c":
        text = repr(complex(v))
    elif lit.aval.dtype.kind == "f":
        text = repr(float(v))
    else:
        text = str(int(v))
    return f"{text}:{lit.aval.str_short()}"


Atom = Var | Literal


class Eqn(NamedTuple):
    primitive: Any  # funcgrad.core.primitive.Primitive
    inputs: list  # list[Atom]
    outputs: list  # list[Var]
    params: dict
    source_info: Any = None  # a core.source_info.SourceLine of the user's line, when known

    # JAX's names (``jax.extend.core.JaxprEqn``), for interpreters written against JAX.
    invars = property(lambda self: self.inputs)
    outvars = property(lambda self: self.outputs)


class Jaxpr:
    """A first-order program: constvars and invars in, eqns in order, outvars out."""

    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def pretty(self) -> str:
        return JaxprPrinter().jaxpr(self, consts=None)

    __str__ = pretty

    def __repr__(self):
        return self.pretty()


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars.

    ``out_tree`` (a PyTreeDef) is attached by ``make_jaxpr`` so callers can rebuild
    pytree outputs; transforms ignore it. ``memo`` (a dict, or None) is where transforms
    keep what they derive from this program (executables, split programs), so it dies
    with the program.
    """

    __slots__ = ("jaxpr", "consts", "out_tree", "in_tree", "memo")

    def __init__(self, jaxpr: Jaxpr, consts, out_tree=None, in_tree=None):
        self.jaxpr = jaxpr
        self.consts = list(consts)
        self.out_tree = out_tree
        self.in_tree = in_tree
        self.memo = None
        if len(self.consts) != len(jaxpr.constvars):
            raise ValueError(
                f"ClosedJaxpr: {len(jaxpr.constvars)} constvars but {len(self.consts)} consts"
            )

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    # JAX's names: ``closed.literals`` are the consts; the variables of the open jaxpr.
    literals = property(lambda self: self.consts)
    constvars = property(lambda self: self.jaxpr.constvars)
    invars = property(lambda self: self.jaxpr.invars)
    outvars = property(lambda self: self.jaxpr.outvars)

    def pretty(self) -> str:
        return JaxprPrinter().jaxpr(self.jaxpr, consts=self.consts)

    __str__ = pretty

    def __repr__(self):
        return self.pretty()

    # Closed jaxprs appear as params of higher-order primitives, which must be hashable.
    def __hash__(self):
        return id(self.jaxpr)

    def __eq__(self, other):
        return isinstance(other, ClosedJaxpr) and other.jaxpr is self.jaxpr and all(
            a is b for a, b in zip(self.consts, other.consts)
        )


def _var_names():
    """a, b, ..., z, ba, bb, ... (base-26 with 'a' as the digit zero, like JAX)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    i = 0
    while True:
        n, s = i, ""
        while True:
            s = letters[n % 26] + s
            n //= 26
            if n == 0:
                break
        yield s
        i += 1


class JaxprPrinter:
    """Prints jaxprs; one instance numbers the vars of a jaxpr and all its sub-jaxprs."""

    def __init__(self):
        self._names: dict[int, str] = {}
        self._gen = _var_names()

    def name(self, v) -> str:
        if isinstance(v, Literal):
            return _literal_str(v)
        n = self._names.get(id(v))
        if n is None:
            n = self._names[id(v)] = next(self._gen)
        return n

    def binder(self, v: Var) -> str:
        return f"{self.name(v)}:{v.aval.str_short()}"

    def param(self, value, indent: int) -> str:
        if isinstance(value, ClosedJaxpr):
            return "\n" + self.jaxpr(value.jaxpr, value.consts, indent + 4)
        if isinstance(value, Jaxpr):
            return "\n" + self.jaxpr(value, None, indent + 4)
        if isinstance(value, tuple) and value and all(isinstance(v, (ClosedJaxpr, Jaxpr)) for v in value):
            return "(" + "".join(self.param(v, indent) for v in value) + "\n" + " " * (indent + 2) + ")"
        if isinstance(value, np.dtype):
            return value.name
        if callable(value) and not isinstance(value, type):
            # Functions carried by custom-rule primitives: name only (addresses would
            # make the printout unstable).
            return getattr(value, "__name__", type(value).__name__)
        if isinstance(value, type) and issubclass(value, np.generic):
            return np.dtype(value).name
        return str(value)

    def eqn(self, e: Eqn, indent: int) -> str:
        outs = " ".join(self.binder(v) for v in e.outputs) if e.outputs else "_"
        params = ""
        if e.params:
            items = " ".join(f"{k}={self.param(e.params[k], indent)}" for k in sorted(e.params))
            params = f"[{items}]"
        ins = " ".join(self.name(v) for v in e.inputs)
        return f"{' ' * indent}{outs} = {e.primitive.name}{params} {ins}".rstrip()

    def jaxpr(self, jaxpr: Jaxpr, consts=None, indent: int = 0) -> str:
        pad = " " * indent
        constvars = " ".join(self.binder(v) for v in jaxpr.constvars)
        invars = " ".join(self.binder(v) for v in jaxpr.invars)
        head = f"{pad}{{ lambda {constvars} ; {invars}. let" if constvars else f"{pad}{{ lambda ; {invars}. let"
        lines = [head]
        lines += [self.eqn(e, indent + 4) for e in jaxpr.eqns]
        outs = ", ".join(self.name(v) for v in jaxpr.outvars)
        lines.append(f"{pad}  in ({outs}{',' if len(jaxpr.outvars) == 1 else ''}) }}")
        return "\n".join(lines)
