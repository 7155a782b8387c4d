"""Type checker for jaxprs: run after every transform in tests and in debug mode.

Checks: every variable is bound exactly once and before use; literals are scalars of
their stated type; every equation's output types equal the abstract evaluation of its
primitive on its input types (shape and dtype; weak_type is a promotion hint and is
not compared). Sub-jaxprs in params are checked too (iteratively).
"""
from __future__ import annotations

import numpy as np

from funcgrad import config
from funcgrad.core.ir import ClosedJaxpr, Jaxpr, JaxprPrinter, Literal, Var
from funcgrad.core.source_info import describe
from funcgrad.core.trace import abstract_eval


class JaxprTypeError(TypeError):
    """A jaxpr is ill-typed; the message shows the failing equation and its neighbours."""


def _context(jaxpr: Jaxpr, idx: int, printer: JaxprPrinter) -> str:
    lines = []
    for i in range(max(0, idx - 2), min(len(jaxpr.eqns), idx + 3)):
        mark = ">>> " if i == idx else "    "
        lines.append(mark + printer.eqn(jaxpr.eqns[i], 0))
    return "\n".join(lines)


def subjaxprs(params):
    """(param name, jaxpr) of every sub-jaxpr in an equation's params."""
    for k, v in params.items():
        if isinstance(v, (ClosedJaxpr, Jaxpr)):
            yield k, v.jaxpr if isinstance(v, ClosedJaxpr) else v
        elif isinstance(v, tuple):
            for i, x in enumerate(v):
                if isinstance(x, (ClosedJaxpr, Jaxpr)):
                    yield f"{k}[{i}]", x.jaxpr if isinstance(x, ClosedJaxpr) else x


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Raise ``JaxprTypeError`` if ``jaxpr`` (or any sub-jaxpr) is ill-typed. Each
    sub-jaxpr is checked on its own (its equations against its declared inputs); the
    equation holding it checks, through its primitive's abstract_eval, that those
    inputs and outputs are what it passes and expects. A message names the sub-program
    by its path (``eqn 3 (while).body_jaxpr``)."""
    todo = [(jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr, "")]
    while todo:
        j, where = todo.pop()
        try:
            _check_one(j)
        except JaxprTypeError as e:
            if not where:
                raise
            raise JaxprTypeError(f"in sub-program {where}: {e}") from e.__cause__
        for i, e in enumerate(j.eqns):
            todo.extend((sub, f"{where}{'.' if where else ''}eqn {i} ({e.primitive.name}).{k}")
                        for k, sub in subjaxprs(e.params))


def _check_one(jaxpr: Jaxpr) -> None:
    printer = JaxprPrinter()
    printer.jaxpr(jaxpr)  # assign names in print order so messages match the printout
    bound: set[int] = set()

    def bind_var(v, where):
        if not isinstance(v, Var):
            raise JaxprTypeError(f"{where}: expected a Var, got {v!r}")
        if id(v) in bound:
            raise JaxprTypeError(f"{where}: variable {printer.name(v)} is bound twice")
        bound.add(id(v))

    for v in jaxpr.constvars:
        bind_var(v, "constvars")
    for v in jaxpr.invars:
        bind_var(v, "invars")

    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.inputs:
            if isinstance(a, Literal):
                if np.shape(a.val) != () or a.aval.shape != ():
                    raise JaxprTypeError(f"literal {a!r} is not a scalar\n{_context(jaxpr, i, printer)}")
            elif not isinstance(a, Var) or id(a) not in bound:
                raise JaxprTypeError(
                    f"variable {printer.name(a)} used before it is bound\n{_context(jaxpr, i, printer)}"
                )
        try:
            expected = abstract_eval(eqn.primitive, [a.aval for a in eqn.inputs], eqn.params)
        except Exception as e:  # the rule's own message says what is wrong
            raise JaxprTypeError(
                f"equation rejected by {eqn.primitive.name}'s abstract_eval: {e}\n"
                f"{_context(jaxpr, i, printer)}\nfrom: {describe(eqn.source_info)}"
            ) from e
        if len(expected) != len(eqn.outputs):  # (counted before any output is read)
            raise JaxprTypeError(
                f"{eqn.primitive.name} produces {len(expected)} outputs, equation binds "
                f"{len(eqn.outputs)}\n{_context(jaxpr, i, printer)}"
            )
        for v, aval in zip(eqn.outputs, expected):
            if not isinstance(v, Var):
                raise JaxprTypeError(f"equation {i} ({eqn.primitive.name}): output {v!r} is not a Var")
            if not v.aval.same_type(aval):
                raise JaxprTypeError(
                    f"{eqn.primitive.name} output {printer.name(v)} is declared "
                    f"{v.aval.str_short()} but the inputs give {aval.str_short()}\n"
                    f"{_context(jaxpr, i, printer)}\nfrom: {describe(eqn.source_info)}"
                )
            bind_var(v, f"equation {i} ({eqn.primitive.name})")

    for v in jaxpr.outvars:
        if isinstance(v, Var) and id(v) not in bound:
            raise JaxprTypeError(f"output variable {printer.name(v)} is never bound")


def debug_checks_enabled() -> bool:
    """FUNCGRAD_DEBUG=1 type-checks every jaxpr a transform produces."""
    return config.flag(config.DEBUG)
