"""A line search satisfying the strong Wolfe conditions (Nocedal and Wright,
*Numerical Optimization*, Algorithms 3.5 and 3.6, with SciPy's cubic/quadratic
interpolation safeguards), written as ``lax.while_loop``s over a dict of state so it
stages into ``jit`` and ``vmap``: JAX's ``_src/scipy/optimize/line_search.py``.
Branches are selected with ``where`` (both sides computed), not ``cond``, so a
batched search never needs a batched predicate inside the step."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.trace import Tracer
from funcgrad.transforms.ad_api import value_and_grad


class LineSearchResults(NamedTuple):
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


def _pick(flag, state, new):
    """``state`` with the entries of ``new`` taken where ``flag`` holds."""
    out = dict(state)
    for key, value in new.items():
        out[key] = fnp.where(flag, value, state[key])
    return out


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """Minimiser of the cubic through (a, fa, fpa), (b, fb), (c, fc); NaN if none."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    big_a = (dc ** 2 * rb - db ** 2 * rc) / denom
    big_b = (-(dc ** 3) * rb + db ** 3 * rc) / denom
    radical = big_b * big_b - 3.0 * big_a * fpa
    return a + (-big_b + fnp.sqrt(radical)) / (3.0 * big_a)


def _quadmin(a, fa, fpa, b, fb):
    db = b - a
    curv = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * curv)


def _zoom(phi_and_grad, wolfe_one, wolfe_two, lo, hi, g_0, pass_through, dtype):
    """Algorithm 3.6: shrink [a_lo, a_hi] until a point meets the strong Wolfe conditions."""
    a_lo, phi_lo, dphi_lo = lo
    a_hi, phi_hi, dphi_hi = hi
    state = dict(done=fnp.asarray(False), failed=fnp.asarray(False), j=np.int64(0), a_lo=a_lo, phi_lo=phi_lo,
                 dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2.0,
                 phi_rec=(phi_lo + phi_hi) / 2.0, a_star=fnp.ones((), dtype), phi_star=phi_lo, dphi_star=dphi_lo,
                 g_star=g_0, nfev=np.int64(0), ngev=np.int64(0))
    threshold = 1e-10 if np.dtype(dtype).itemsize == 8 else 1e-5

    def body(state):
        dalpha = state["a_hi"] - state["a_lo"]
        a = fnp.minimum(state["a_hi"], state["a_lo"])
        b = fnp.maximum(state["a_hi"], state["a_lo"])
        cchk, qchk = 0.2 * dalpha, 0.1 * dalpha
        # An interval this small without a Wolfe point: stop, reported as a failure.
        failed = state["failed"] | (fnp.abs(dalpha) <= threshold)
        a_cubic = _cubicmin(state["a_lo"], state["phi_lo"], state["dphi_lo"], state["a_hi"], state["phi_hi"],
                            state["a_rec"], state["phi_rec"])
        use_cubic = (state["j"] > 0) & (a_cubic > a + cchk) & (a_cubic < b - cchk)
        a_quad = _quadmin(state["a_lo"], state["phi_lo"], state["dphi_lo"], state["a_hi"], state["phi_hi"])
        use_quad = ~use_cubic & (a_quad > a + qchk) & (a_quad < b - qchk)
        a_j = fnp.where(use_cubic, a_cubic, fnp.where(use_quad, a_quad, (state["a_lo"] + state["a_hi"]) / 2.0))
        phi_j, dphi_j, g_j = phi_and_grad(a_j)
        state = dict(state, failed=failed, nfev=state["nfev"] + 1, ngev=state["ngev"] + 1)

        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state["phi_lo"])
        star_to_j = wolfe_two(dphi_j) & ~hi_to_j
        hi_to_lo = (dphi_j * (state["a_hi"] - state["a_lo"]) >= 0.0) & ~hi_to_j & ~star_to_j
        lo_to_j = ~hi_to_j & ~star_to_j
        state = _pick(hi_to_j, state, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state["a_hi"],
                                           phi_rec=state["phi_hi"]))
        state = _pick(star_to_j, state, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j))
        state["done"] = state["done"] | star_to_j
        state = _pick(hi_to_lo, state, dict(a_hi=state["a_lo"], phi_hi=state["phi_lo"], dphi_hi=state["dphi_lo"],
                                            a_rec=state["a_hi"], phi_rec=state["phi_hi"]))
        state = _pick(lo_to_j, state, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j, a_rec=state["a_lo"],
                                           phi_rec=state["phi_lo"]))
        state["j"] = state["j"] + 1
        state["failed"] = state["failed"] | (state["j"] >= 30)
        return state

    if not isinstance(pass_through, Tracer) and bool(pass_through):
        return state  # eagerly: a zoom that is not taken is not even traced (eager loops trace their body)
    return lax.while_loop(lambda s: ~s["done"] & ~pass_through & ~s["failed"], body, state)


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """Step ``a_k`` along ``pk`` from ``xk`` meeting the strong Wolfe conditions
    ``f(xk + a pk) <= f(xk) + c1 a pk.g`` and ``|pk.g(xk + a pk)| <= c2 |pk.g(xk)|``."""
    dtype = fnp.asarray(pk).dtype

    def phi_and_grad(t):
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, fnp.dot(g, pk), g

    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = phi_and_grad(fnp.zeros((), dtype))
        first = np.int64(1)
    else:
        phi_0, dphi_0, first = old_fval, fnp.dot(gfk, pk), np.int64(0)
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = fnp.where(candidate > 1, 1.0, candidate).astype(dtype)
    else:
        start = fnp.ones((), dtype)

    def wolfe_one(a_i, phi_i):
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i):
        return fnp.abs(dphi_i) <= -c2 * dphi_0

    zero = fnp.zeros((), dtype)
    state = dict(done=fnp.asarray(False), failed=fnp.asarray(False), i=np.int64(1), a_i1=zero, phi_i1=phi_0,
                 dphi_i1=dphi_0, nfev=first, ngev=first, a_star=zero, phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def body(state):
        a_i = fnp.where(state["i"] == 1, start, state["a_i1"] * 2.0)
        phi_i, dphi_i, g_i = phi_and_grad(a_i)
        state = dict(state, nfev=state["nfev"] + 1, ngev=state["ngev"] + 1)
        to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state["phi_i1"]) & (state["i"] > 1))
        to_i = wolfe_two(dphi_i) & ~to_zoom1
        to_zoom2 = (dphi_i >= 0.0) & ~to_zoom1 & ~to_i
        prev = (state["a_i1"], state["phi_i1"], state["dphi_i1"])
        cur = (a_i, phi_i, dphi_i)
        zoom1 = _zoom(phi_and_grad, wolfe_one, wolfe_two, prev, cur, gfk, ~to_zoom1, dtype)
        zoom2 = _zoom(phi_and_grad, wolfe_one, wolfe_two, cur, prev, gfk, ~to_zoom2, dtype)
        state["nfev"] = state["nfev"] + zoom1["nfev"] + zoom2["nfev"]
        state["ngev"] = state["ngev"] + zoom1["ngev"] + zoom2["ngev"]
        keys = ("a_star", "phi_star", "dphi_star", "g_star")
        state = _pick(to_zoom1, state, {k: zoom1[k] for k in keys})
        state["failed"] = state["failed"] | (to_zoom1 & zoom1["failed"]) | (to_zoom2 & zoom2["failed"])
        state = _pick(to_i, state, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i))
        state = _pick(to_zoom2, state, {k: zoom2[k] for k in keys})
        state["done"] = state["done"] | to_zoom1 | to_i | to_zoom2
        return dict(state, i=state["i"] + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(lambda s: ~s["done"] & (s["i"] <= maxiter) & ~s["failed"], body, state)
    status = fnp.where(state["failed"], 1, fnp.where(state["i"] > maxiter, 3, 0))
    return LineSearchResults(failed=state["failed"] | ~state["done"], nit=state["i"] - 1, nfev=state["nfev"],
                             ngev=state["ngev"], k=state["i"], a_k=state["a_star"], f_k=state["phi_star"],
                             g_k=state["g_star"], status=status)
