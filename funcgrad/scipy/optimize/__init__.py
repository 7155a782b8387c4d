"""``funcgrad.scipy.optimize``: ``minimize(method="BFGS")`` as JAX's, and a
``root`` solver (JAX has none), pure funcgrad: they run eagerly, stage into ``jit``
and batch under ``vmap`` (e.g. over ``x0``).

Beyond JAX, solutions are differentiable with respect to ``args`` by implicit
differentiation (the solvers themselves are not differentiated): ``root``'s ``x``
through ``F(x*, args) = 0`` and ``minimize``'s ``x`` through ``grad f(x*, args) = 0``
(``dx*/dargs = -J_x^-1 J_args``; it needs a non-singular Jacobian/Hessian at the
solution). ``minimize``'s ``fun`` and ``jac`` are recomputed at that ``x`` so they
differentiate too; ``hess_inv`` (an estimate) and the counters carry no derivative.

>>> res = minimize(lambda x: fnp.sum((x - 3.0) ** 2), np.zeros(2))
>>> res.x
array([3., 3.])

Not provided (deliberately): the other ``scipy.optimize`` methods and functions (JAX
has only BFGS and an experimental L-BFGS); ``root`` has ``"hybr"`` and ``"newton"``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import pytree
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import shape_of
from funcgrad.scipy.optimize import _root
from funcgrad.scipy.optimize._bfgs import minimize_bfgs
from funcgrad.scipy.optimize._implicit import implicit_solution
from funcgrad.transforms.ad_api import grad, stop_gradient, value_and_grad

__all__ = ["minimize", "OptimizeResults", "root", "RootResults"]


class OptimizeResults(NamedTuple):
    """JAX's result of ``minimize``: ``x``, ``success``, ``status`` (0 converged, 1
    maxiter, 3-5 line-search failures, as JAX), ``fun``, ``jac``, ``hess_inv``,
    ``nfev``, ``njev``, ``nit``."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


class RootResults(NamedTuple):
    """Result of ``root``: ``x``, ``success``, ``status`` (0 converged, 1 maxiter, 2
    failed: singular Jacobian / no progress), ``fun`` (F at x), ``nfev``, ``njev``, ``nit``."""
    x: object
    success: object
    status: object
    fun: object
    nfev: object
    njev: object
    nit: object


def _check_args(fname, fun, args):
    if not callable(fun):
        raise TypeError(f"{fname}: fun must be callable, got {type(fun).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"{fname}: args must be a tuple, got {type(args).__name__}")
    for leaf in pytree.tree_leaves(args):
        _util.check_arraylike(fname, leaf)


def _stopped(args):
    return pytree.tree_map(stop_gradient, args)


def minimize(fun, x0, args=(), *, method="BFGS", tol=None, options=None):
    """Minimise ``fun(x, *args)`` (scalar) over the 1-d ``x`` from ``x0``.
    ``method="BFGS"`` (case-insensitive); ``options``: ``maxiter`` (200 n), ``norm``
    (inf), ``gtol`` (1e-5; ``tol`` sets it too, as SciPy), ``line_search_maxiter`` (10)."""
    _check_args("minimize", fun, args)
    if not isinstance(method, str) or method.lower() != "bfgs":
        raise ValueError(f"minimize: method {method!r} not recognized; funcgrad (like JAX) has method='BFGS'")
    options = dict(options or {})
    unknown = set(options) - {"maxiter", "norm", "gtol", "line_search_maxiter"}
    if unknown:
        raise TypeError(f"minimize: unknown BFGS options {sorted(unknown)}")
    if tol is not None:
        options.setdefault("gtol", float(tol))
    _util.check_arraylike("minimize", x0)
    x0 = _util.asarray(x0, fname="minimize")
    (x0,) = _util.promote_dtypes_inexact(x0, fname="minimize")
    if len(shape_of(x0)) != 1:
        raise ValueError(f"minimize: x0 must be 1-dimensional, got shape {shape_of(x0)}")
    stopped = _stopped(args)
    with np.errstate(all="ignore"):  # eagerly too, floating-point exceptions are silent (y.s == 0 is handled)
        res = minimize_bfgs(lambda x: fun(x, *stopped), x0, **options)

    def gradient(x, *a):
        return grad(fun)(x, *a)

    x = implicit_solution(gradient, res.x_k, args)
    f, g = value_and_grad(fun)(x, *args)
    success = res.converged & ~res.failed
    return OptimizeResults(x=x, success=success, status=res.status, fun=f, jac=g, hess_inv=stop_gradient(res.H_k),
                           nfev=res.nfev, njev=res.ngev, nit=res.k)


_METHODS = {"hybr": _root.solve_hybr, "newton": _root.solve_newton}


def root(fun, x0, args=(), method="hybr", tol=None, options=None):
    """A root of ``fun(x, *args)`` (same shape as ``x``) near ``x0``. ``method``:
    ``"hybr"`` (Powell's dogleg trust region, the default) or ``"newton"`` (damped
    Newton); ``options``: ``xtol`` (1.49012e-8, or ``tol``), ``maxiter`` (100 (n + 1)),
    and ``factor`` (100, hybr's initial radius). ``x`` differentiates with respect to
    ``args`` by the implicit function theorem."""
    _check_args("root", fun, args)
    if method not in _METHODS:
        raise ValueError(f"root: method must be one of {sorted(_METHODS)}, got {method!r}")
    _util.check_arraylike("root", x0)
    x0 = _util.asarray(x0, fname="root")
    (x0,) = _util.promote_dtypes_inexact(x0, fname="root")
    shape = shape_of(x0)
    n = int(np.prod(shape, dtype=np.int64))
    options = dict(options or {})
    allowed = {"xtol", "maxiter"} | ({"factor"} if method == "hybr" else set())
    if set(options) - allowed:
        raise TypeError(f"root: unknown options {sorted(set(options) - allowed)} for method {method!r}")
    xtol = float(options.pop("xtol", 1.49012e-8 if tol is None else tol))
    maxiter = int(options.pop("maxiter", 100 * (n + 1)))

    def flat_fun(y, *a):
        out = fnp.asarray(fun(fnp.reshape(y, shape), *a))
        if shape_of(out) != shape:
            raise ValueError(f"root: fun must return the shape of x0 {shape}, got {shape_of(out)}")
        return fnp.ravel(out).astype(x0.dtype)

    stopped = _stopped(args)
    with np.errstate(all="ignore"):  # a singular Jacobian gives NaN steps, handled
        state = _METHODS[method](lambda y: flat_fun(y, *stopped), fnp.ravel(x0), xtol, maxiter, **options)
    x = implicit_solution(flat_fun, state["x"], args)
    status = fnp.where(state["done"], 0, fnp.where(state["failed"], 2, 1))
    return RootResults(x=fnp.reshape(x, shape), success=state["done"] & ~state["failed"], status=status,
                       fun=fnp.reshape(flat_fun(x, *args), shape), nfev=state["nfev"], njev=state["njev"],
                       nit=state["nit"])
