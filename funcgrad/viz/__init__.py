"""Pictures of programs: ``fg.draw(f)(*args)`` and ``fg.jit(f).lower(*args).draw()``.

>>> g = fg.draw(fg.grad(loss))(w, x)
>>> print(g)                    # Graphviz DOT text (no dependency)
>>> g.render("loss_grad.svg")   # needs the optional extra: pip install 'funcgrad[viz]'

What is drawn (``dot.py``): operators as nodes (primitive and key params), values as
edges labelled with their type (``f64[3,4]``), sub-jaxprs of control flow, jit calls
and custom rules as clusters, inputs (blue, inverted house), outputs (green, house),
constants (grey cylinders; literals as plain text). In a program that runs a reverse
pass, equations staged by the reverse-mode walker are red ("backward"), the rest
yellow ("forward"): see ``phases.py`` for the criterion. ``Lowered.draw()`` shows the
program jit compiles (after inlining, CSE and DCE) with one cluster per loop nest of
its fusion plan.
"""
from __future__ import annotations

from funcgrad.core.ir import ClosedJaxpr, Jaxpr
from funcgrad.core.staging import make_jaxpr
from funcgrad.core.wrapping import fun_name
from funcgrad.viz.dot import DotBuilder
from funcgrad.viz.graph import Graph, GraphvizNotFound
from funcgrad.viz.phases import BackwardMarks

_RANKDIRS = ("TB", "LR", "BT", "RL")


def _builder(fname: str, name: str, backward, rankdir="TB", show_params=True, param_chars=40, note="") -> DotBuilder:
    if rankdir not in _RANKDIRS:
        raise ValueError(f"{fname}: rankdir must be one of {', '.join(_RANKDIRS)}, got {rankdir!r}")
    if isinstance(param_chars, bool) or not isinstance(param_chars, int) or param_chars < 4:
        raise ValueError(f"{fname}: param_chars must be an int >= 4, got {param_chars!r}")
    return DotBuilder(name, backward, bool(show_params), param_chars, rankdir, note)


def draw(fun, *, static_argnums=(), name=None, rankdir="TB", show_params=True, param_chars=40):
    """``draw(fun)(*args)``: the ``Graph`` of the program ``fun`` traces to at ``args``
    (as ``make_jaxpr(fun, static_argnums)(*args)``). Any function: ``grad(f)``,
    ``vmap(f)``, ``jit(f)`` (its program is a cluster), compositions.

    ``rankdir``: Graphviz's layout direction ("TB" top to bottom, "LR", ...);
    ``show_params``: key params under each primitive's name, each cut to ``param_chars``
    characters; ``name``: the picture's title (default the function's name).

    Forward/backward colouring is recorded while tracing, so a ``jit``-ed function
    traced before (its program cached) shows its body without it.
    """
    if not callable(fun):
        raise TypeError(f"draw: expected a function, got {type(fun).__name__}")
    title = name if name is not None else fun_name(fun)
    if not isinstance(title, str):
        raise TypeError(f"draw: name must be a str, got {type(title).__name__}")
    _builder("draw", title, None, rankdir, show_params, param_chars)  # check the options before tracing

    def traced(*args, **kwargs):
        if kwargs:
            raise TypeError(f"draw({title}): pass arguments positionally (got keyword arguments "
                            f"{', '.join(sorted(kwargs))}); close over the others")
        with BackwardMarks() as marks:
            closed = make_jaxpr(fun, static_argnums)(*args)
        b = _builder("draw", title, marks.is_backward if marks else None, rankdir, show_params, param_chars)
        b.program(closed.jaxpr)
        return Graph(b, closed)

    traced.__name__ = f"draw({title})"
    return traced


def draw_jaxpr(jaxpr, *, name="jaxpr", rankdir="TB", show_params=True, param_chars=40) -> Graph:
    """The ``Graph`` of a ``ClosedJaxpr`` or ``Jaxpr`` you already have (e.g. from
    ``make_jaxpr``; no forward/backward colouring: that is recorded while tracing)."""
    if isinstance(jaxpr, ClosedJaxpr):
        inner = jaxpr.jaxpr
    elif isinstance(jaxpr, Jaxpr):
        inner = jaxpr
    else:
        raise TypeError(f"draw_jaxpr: argument jaxpr must be a ClosedJaxpr or Jaxpr, got {type(jaxpr).__name__}")
    b = _builder("draw_jaxpr", name, None, rankdir, show_params, param_chars)
    b.program(inner)
    return Graph(b, jaxpr)


def draw_executable(exe, *, name, rankdir="TB", show_params=True, param_chars=40) -> Graph:
    """The program a jit executable runs, one cluster per loop nest (``Lowered.draw``)."""
    jaxpr = getattr(exe, "jaxpr", None)  # (compiled: the simplified program it was planned from)
    if jaxpr is None:  # the evaluator fallback: nothing was fused
        b = _builder("Lowered.draw", name, None, rankdir, show_params, param_chars,
                     note=f"not compiled ({exe.reason}): no loop nests")
        b.program(exe.closed.jaxpr)
        return Graph(b, exe.closed)
    from funcgrad.lowering.compiler import plan

    b = _builder("Lowered.draw", name, None, rankdir, show_params, param_chars, note="one cluster per loop nest")
    b.fused(jaxpr, plan(jaxpr))
    return Graph(b, ClosedJaxpr(jaxpr, exe.closed.consts))


__all__ = ["draw", "draw_jaxpr", "Graph", "GraphvizNotFound"]
