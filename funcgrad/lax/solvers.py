"""Implicitly differentiated solvers, as ``jax.lax``: ``custom_root`` and
``custom_linear_solve``. The user's solver runs on primal values only and is never
differentiated; derivatives come from the implicit function theorem:

- ``custom_root``: at a root ``x*`` of ``f(x; p) = 0``, ``dx* = -(∂f/∂x)^-1 ∂f/∂p dp``,
  the inverse applied by the user's ``tangent_solve(g, y)`` (``g`` is ``∂f/∂x`` at ``x*``).
- ``custom_linear_solve``: ``x = A^-1 b`` gives ``dx = A^-1 (db - dA x)``, solved again by
  ``solve``; reverse mode transposes that solve into ``transpose_solve`` on ``A^T``.

Values ``f``/``matvec`` close over (the parameters ``p``/``A``) are made explicit
arguments (closure conversion by staging), so derivatives with respect to them flow.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.ad_util import Zero, instantiate, tangent_aval
from funcgrad.core.interpret import eval_jaxpr
from funcgrad.core.prims.calls import custom_lin_p
from funcgrad.core.staging import trace_to_jaxpr
from funcgrad.core.trace import Tracer, get_aval_any
from funcgrad.lax import _util
from funcgrad.transforms.ad_api import linear_transpose
from funcgrad.transforms.custom import custom_jvp
from funcgrad.transforms.jvp import jvp_flat

__all__ = ["custom_linear_solve", "custom_root"]


def _stage(fun, x_leaves, x_tree):
    """(jaxpr, consts, out_tree) of ``fun`` (pytree -> pytree) at ``x_leaves``' avals: the
    values it closes over (traced or not) become the jaxpr's constants."""
    out_tree = []

    def flat(*leaves):
        out_leaves, tree = pytree.tree_flatten(fun(pytree.tree_unflatten(x_tree, leaves)))
        out_tree[:] = [tree]
        return out_leaves

    jaxpr, consts = trace_to_jaxpr(flat, [get_aval_any(x) for x in x_leaves])
    return jaxpr, consts, out_tree[0]


def _bound(jaxpr, consts, out_tree):
    """The staged function at these constants, on pytrees."""
    def fun(x):
        return pytree.tree_unflatten(out_tree, eval_jaxpr(jaxpr, list(consts), *pytree.tree_leaves(x)))
    return fun


class _Staged:
    """``fun`` (x pytree -> pytree of x's structure) staged at ``x``'s avals: its constants
    (closed-over values, traced or not) become explicit leading operands."""

    def __init__(self, fname, argname, fun, x_leaves, x_tree):
        self.jaxpr, self.consts, out_tree = _stage(fun, x_leaves, x_tree)
        out_avals = [v.aval for v in self.jaxpr.outvars]
        in_avals = [get_aval_any(x) for x in x_leaves]
        if out_tree != x_tree or any(a.shape != b.shape or a.dtype != b.dtype for a, b in zip(out_avals, in_avals)):
            raise TypeError(f"{fname}: {argname} must map its input to the same structure, shapes and dtypes: "
                            f"input {x_tree} {[a.str_short() for a in in_avals]}, output {out_tree} "
                            f"{[a.str_short() for a in out_avals]}")
        self.tree = x_tree
        self.traced = any(isinstance(c, Tracer) for c in self.consts)

    def bind(self, consts):
        """The function at these constants, on pytrees."""
        return _bound(self.jaxpr, consts, self.tree)

    def jvp_consts(self, consts, consts_dot, x_leaves):
        """The tangent of ``fun(x)`` from the constants' tangents (float ones only)."""
        diff = [i for i, c in enumerate(consts) if get_aval_any(c).dtype.kind == "f"]

        def at_x(*dc):
            full = list(consts)
            for i, v in zip(diff, dc):
                full[i] = v
            return eval_jaxpr(self.jaxpr, full, *x_leaves)

        _, t = jvp_flat(at_x, [consts[i] for i in diff], [consts_dot[i] for i in diff])
        return [instantiate(v) for v in t]


class _Solver:
    """A user's solver ``solve(fn, y)`` staged with ``fn`` the staged function (its
    transpose with ``transpose=True``) at constants that are the solver's leading
    *inputs*, so the solver sees no differentiated value. Its own closed-over values are
    operands whose tangents are ignored: the solver is never differentiated, as in JAX."""

    def __init__(self, solve, staged, y_leaves, y_tree, point=None):
        nf = len(staged.consts)
        out_tree = []

        def flat(*leaves):
            fn = staged.bind(leaves[:nf])
            if point is not None:  # the linear function's transpose
                transposed = linear_transpose(fn, point)
                fn = lambda y: transposed(y)[0]  # noqa: E731
            out, tree = pytree.tree_flatten(solve(fn, pytree.tree_unflatten(y_tree, leaves[nf:])))
            out_tree[:] = [tree]
            return out

        in_avals = [get_aval_any(c) for c in staged.consts] + [get_aval_any(y) for y in y_leaves]
        self.jaxpr, self.consts = trace_to_jaxpr(flat, in_avals)
        self.out_tree = out_tree[0]

    def bind(self, consts, fn_consts):
        def fun(y):
            out = eval_jaxpr(self.jaxpr, list(consts), *fn_consts, *pytree.tree_leaves(y))
            return pytree.tree_unflatten(self.out_tree, out)
        return fun


def _split_aux(fname, out, has_aux):
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{fname}: with has_aux=True, solve must return a pair (solution, aux)")
    return out[0], out[1]


def _check_solution(fname, sol, tree, avals):
    leaves, t = pytree.tree_flatten(sol)
    got = [get_aval_any(v) for v in leaves]
    if t != tree or any(a.shape != b.shape for a, b in zip(got, avals)):
        raise TypeError(f"{fname}: solve must return a solution of the input's structure {tree} and shapes "
                        f"{[a.shape for a in avals]}, got {t} {[a.shape for a in got]}")
    return leaves


def _zeros_like(tree):
    return pytree.tree_map(lambda v: instantiate(Zero(tangent_aval(get_aval_any(v)))), tree)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """``solve(f, initial_guess)``: a root of ``f``, differentiated implicitly.

    ``f`` maps a pytree to one of the same structure; ``solve(f, x0)`` returns the root
    (and an auxiliary output with ``has_aux=True``, not differentiated);
    ``tangent_solve(g, y)`` solves the linear system ``g(x) = y`` (``g``, the derivative
    of ``f`` at the root, is linear): e.g. ``lambda g, y: y / g(1.0)`` for a scalar.

    >>> def newton(f, x0):
    ...     return lax.fori_loop(0, 20, lambda i, x: x - f(x) / fg.grad(f)(x), x0)
    >>> def sqrt(a):
    ...     return lax.custom_root(lambda x: x ** 2 - a, 1.0, newton, lambda g, y: y / g(1.0))
    >>> sqrt(2.0)
    Array(1.41421356)
    >>> fg.grad(sqrt)(2.0)   # 1 / (2 sqrt(2)), without differentiating the iterations
    Array(0.35355339)
    """
    for name, fn in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        if not callable(fn):
            raise TypeError(f"custom_root: {name} must be callable, got {type(fn).__name__}")
    g_leaves, g_tree = pytree.tree_flatten(initial_guess)
    g_avals = [_util.aval("custom_root", v, "initial_guess") for v in g_leaves]
    staged = _Staged("custom_root", "f", f, g_leaves, g_tree)
    if not staged.traced and not any(isinstance(v, Tracer) for v in g_leaves):
        out = solve(f, initial_guess)  # nothing to differentiate: plain call
        _check_solution("custom_root", _split_aux("custom_root", out, has_aux)[0], g_tree, g_avals)
        return out
    solver = _Solver(solve, staged, g_leaves, g_tree)
    nf, ns = len(staged.consts), len(solver.consts)

    def run(*args):
        out = solver.bind(args[nf:nf + ns], args[:nf])(pytree.tree_unflatten(g_tree, args[nf + ns:]))
        _check_solution("custom_root", _split_aux("custom_root", out, has_aux)[0], g_tree, g_avals)
        return out

    root = custom_jvp(run)

    @root.defjvp
    def _root_jvp(primals, tangents):
        consts, consts_dot = list(primals[:nf]), list(tangents[:nf])  # the solver's own: ignored
        out = root(*primals)  # (not run: an outer derivative must meet this rule again)
        sol, aux = _split_aux("custom_root", out, has_aux)
        sol_leaves = pytree.tree_leaves(sol)
        rhs = pytree.tree_unflatten(g_tree, staged.jvp_consts(consts, consts_dot, sol_leaves))
        f_at = staged.bind(consts)

        def f_jvp(v):  # ∂f/∂x at the root, a linear map
            _, t = jvp_flat(lambda *x: pytree.tree_leaves(f_at(pytree.tree_unflatten(g_tree, x))),
                            sol_leaves, pytree.tree_leaves(v))
            return pytree.tree_unflatten(g_tree, [instantiate(w) for w in t])

        sol_dot = pytree.tree_map(lambda v: -v, tangent_solve(f_jvp, rhs))
        _check_solution("custom_root: tangent_solve", sol_dot, g_tree, g_avals)
        return out, ((sol_dot, _zeros_like(aux)) if has_aux else sol_dot)

    return root(*staged.consts, *solver.consts, *g_leaves)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """``solve(matvec, b)``: the solution ``x`` of ``matvec(x) = b``, differentiated
    implicitly (the solver's iterations are not). ``matvec`` is linear, from and to
    pytrees of ``b``'s structure; ``transpose_solve(vecmat, b)`` solves the transposed
    system (needed for reverse mode unless ``symmetric=True``, when ``solve`` is used).

    >>> A = fnp.array([[2.0, 1.0], [1.0, 3.0]])
    >>> def solve(b):
    ...     return lax.custom_linear_solve(lambda x: A @ x, b, lambda mv, b: fnp.linalg.solve(A, b),
    ...                                    symmetric=True)
    >>> solve(fnp.array([1.0, 2.0]))
    Array([0.2, 0.6])
    >>> fg.grad(lambda b: solve(b).sum())(fnp.array([1.0, 2.0]))   # A^-T @ ones
    Array([0.4, 0.2])
    """
    for name, fn in (("matvec", matvec), ("solve", solve)):
        if not callable(fn):
            raise TypeError(f"custom_linear_solve: {name} must be callable, got {type(fn).__name__}")
    if transpose_solve is not None and not callable(transpose_solve):
        raise TypeError(f"custom_linear_solve: transpose_solve must be callable or None, got "
                        f"{type(transpose_solve).__name__}")
    b_leaves, b_tree = pytree.tree_flatten(b)
    b_avals = [_util.aval("custom_linear_solve", v, "b") for v in b_leaves]
    staged = _Staged("custom_linear_solve", "matvec", matvec, b_leaves, b_tree)
    if not staged.traced and not any(isinstance(v, Tracer) for v in b_leaves):
        out = solve(matvec, b)
        _check_solution("custom_linear_solve", _split_aux("custom_linear_solve", out, has_aux)[0], b_tree, b_avals)
        return out
    return _linear_solve(staged, solve, transpose_solve, symmetric, has_aux, b_leaves, b_avals)


def _linear_solve(staged, solve, transpose_solve, symmetric, has_aux, b_leaves, b_avals):
    b_tree, fname = staged.tree, "custom_linear_solve"
    # matvec is linear: transposed at zeros (not at b, which may be a finished transform's tracer)
    point = pytree.tree_unflatten(b_tree, [np.zeros(a.shape, a.dtype) for a in b_avals])
    solver = _Solver(solve, staged, b_leaves, b_tree)
    t_solver = None
    if transpose_solve is not None and not symmetric:
        t_solver = _Solver(transpose_solve, staged, b_leaves, b_tree, point=point)
    groups = [len(staged.consts), len(solver.consts), len(t_solver.consts) if t_solver else 0]
    nc = sum(groups)

    def split(args):
        a, b = groups[0], groups[0] + groups[1]
        return list(args[:a]), list(args[a:b]), list(args[b:nc])

    def run(*args):
        mvc, sc, _ = split(args)
        out = solver.bind(sc, mvc)(pytree.tree_unflatten(b_tree, args[nc:]))
        _check_solution(fname, _split_aux(fname, out, has_aux)[0], b_tree, b_avals)
        return out

    def solvers(nonlin):
        mvc, sc, tc = split(nonlin)
        fwd = lambda mv, y: _split_aux(fname, solver.bind(sc, mvc)(y), has_aux)[0]  # noqa: E731
        bwd = (lambda vm, y: t_solver.bind(tc, mvc)(y)) if t_solver else (fwd if symmetric else None)  # noqa: E731
        return fwd, bwd

    def lin_forward(nonlin, r):  # x_dot = A^-1 r, itself implicitly differentiated
        fwd, bwd = solvers(nonlin)
        mv = staged.bind(split(nonlin)[0])
        return pytree.tree_leaves(custom_linear_solve(mv, pytree.tree_unflatten(b_tree, r), fwd, bwd, symmetric))

    def lin_backward(nonlin, ct):  # its transpose: A^-T ct, solved by transpose_solve
        fwd, bwd = solvers(nonlin)
        if bwd is None:
            raise TypeError("custom_linear_solve: transpose_solve is required for reverse-mode differentiation "
                            "(grad, vjp) unless symmetric=True")
        mv = staged.bind(split(nonlin)[0])
        if symmetric:
            vecmat = mv
        else:
            transposed = linear_transpose(mv, point)
            vecmat = lambda y: transposed(y)[0]  # noqa: E731
        return pytree.tree_leaves(custom_linear_solve(vecmat, pytree.tree_unflatten(b_tree, ct), bwd, fwd, symmetric))

    lin_solve = custom_jvp(run)

    @lin_solve.defjvp
    def _linear_solve_jvp(primals, tangents):
        mvc, _, _ = split(primals)
        out = lin_solve(*primals)  # (not run: an outer derivative must meet this rule again)
        x, aux = _split_aux(fname, out, has_aux)
        x_leaves = pytree.tree_leaves(x)
        mv_dot = staged.jvp_consts(mvc, split(tangents)[0], x_leaves)  # the solvers' constants: ignored
        rhs = [instantiate(t) for t in tangents[nc:]]
        rhs = [r - m for r, m in zip(rhs, mv_dot)] if mv_dot else rhs
        x_dot = custom_lin_p.bind(*primals[:nc], *rhs, num_nonlin=nc, jvp_fn=lin_forward, bwd_fn=lin_backward,
                                  out_avals=tuple(tangent_aval(a) for a in b_avals))
        x_dot = pytree.tree_unflatten(b_tree, x_dot)
        return out, ((x_dot, _zeros_like(aux)) if has_aux else x_dot)

    return lin_solve(*staged.consts, *solver.consts, *(t_solver.consts if t_solver else []), *b_leaves)
