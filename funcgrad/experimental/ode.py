"""``odeint``: adaptive Dormand-Prince 5(4) integration with adjoint-method gradients,
JAX's ``jax.experimental.ode.odeint`` (same signature, step-size control, initial
step selection and dense output).

- The solver is ``lax.scan`` over the output times around a ``lax.while_loop`` of
  Runge-Kutta steps, so it stages into ``jit`` (compiled natively), ``vmap`` (over
  ``y0`` or ``args``: lanes step together, each keeping its own step size) and
  ``make_jaxpr``. Called eagerly it runs the loop in Python; wrap it in ``jit`` for
  long integrations.
- Each output ``y(t_i)`` is read from the quartic interpolant of the step that crosses
  ``t_i`` (Dormand-Prince dense output), so output times do not shorten steps.
- Reverse mode (``grad``, ``vjp``) is the adjoint method, as JAX: a ``custom_vjp``
  whose backward pass integrates ``(y, -a^T df/dy, -a^T df/dt, -a^T df/dargs)``
  backwards in time with the same solver and tolerances, between consecutive output
  times, giving cotangents for ``y0``, ``t`` and every float leaf of ``args``. Forward
  mode (``jvp``, ``jacfwd``) differentiates the solver's own steps.
- ``func`` must not close over values being differentiated: pass them in ``args``
  (JAX closure-converts; funcgrad raises ``UnexpectedTracerError`` naming it).

>>> import funcgrad.numpy as fnp
>>> ys = odeint(lambda y, t, k: -k * y, 1.0, fnp.linspace(0.0, 1.0, 3), 2.0)
>>> float(ys[-1])  # exp(-2)
0.1353352832...
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import pytree
from funcgrad.numpy_api import _util
from funcgrad.numpy_api._util import aval_of, shape_of
from funcgrad.transforms.ad_api import vjp
from funcgrad.transforms.batching import vmap
from funcgrad.transforms.custom import custom_vjp
from funcgrad.transforms.custom_gradient import closure_convert

__all__ = ["odeint"]

# Dormand-Prince 5(4) tableau: nodes, stage weights, 5th-order solution, error estimate,
# and the dense-output midpoint weights (the same constants as JAX's ode.py).
_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_BETA = (
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_C_SOL = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_C_ERR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0)
_C_MID = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2, -2691868925 / 45128329728 / 2,
          187940372067 / 1594534317056 / 2, -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def _combo(coeffs, ks):
    """sum_j c_j k_j, skipping zero weights (the stages are unrolled: no dynamic indexing)."""
    terms = [c * k for c, k in zip(coeffs, ks) if c != 0.0]
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def _rk_step(fun, y0, f0, t0, dt):
    """One Dormand-Prince step: (y1, f1, error estimate, the 7 stage slopes)."""
    ks = [f0]
    for alpha, beta in zip(_ALPHA, _BETA):
        ks.append(fun(y0 + dt * _combo(beta, ks), t0 + dt * alpha))
    y1 = y0 + dt * _combo(_C_SOL, ks)
    return y1, ks[-1], dt * _combo(_C_ERR, ks), ks


def _interp_fit(y0, y1, ks, dt):
    """Coefficients (a, b, c, d, e) of the quartic through the step (dense output)."""
    y_mid = y0 + dt * _combo(_C_MID, ks)
    dy0, dy1 = dt * ks[0], dt * ks[-1]
    a = -2.0 * dy0 + 2.0 * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * dy0 - 3.0 * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * dy0 + dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return fnp.stack([a, b, c, dy0, y0])


def _polyval(coeffs, x):
    out = coeffs[0]
    for k in range(1, shape_of(coeffs)[0]):
        out = out * x + coeffs[k]
    return out


def _initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """Hairer, Norsett and Wanner, *Solving ODEs I*, Sec. II.4 (as JAX)."""
    scale = atol + fnp.abs(y0) * rtol
    d0 = fnp.sqrt(fnp.sum((y0 / scale) ** 2))
    d1 = fnp.sqrt(fnp.sum((f0 / scale) ** 2))
    h0 = fnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / fnp.where(d1 == 0, 1.0, d1))
    f1 = fun(y0 + h0 * f0, t0 + h0)
    d2 = fnp.sqrt(fnp.sum(((f1 - f0) / scale) ** 2)) / h0
    small = (d1 <= 1e-15) & (d2 <= 1e-15)
    h1 = fnp.where(small, fnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / fnp.where(small, 1.0, fnp.maximum(d1, d2))) ** (1.0 / (order + 1.0)))
    return fnp.minimum(100.0 * h0, h1)


def _error_ratio(err, rtol, atol, y0, y1):
    tol = atol + rtol * fnp.maximum(fnp.abs(y0), fnp.abs(y1))
    return fnp.sqrt(fnp.mean((err / tol) ** 2))


def _optimal_step_size(last_step, ratio, safety=0.9, ifactor=10.0, dfactor=0.2, order=5.0):
    dfactor = fnp.where(ratio < 1, 1.0, dfactor)
    safe = fnp.where(ratio == 0, 1.0, ratio)
    factor = fnp.minimum(ifactor, fnp.maximum(safe ** (-1.0 / order) * safety, dfactor))
    return fnp.where(ratio == 0, last_step * ifactor, last_step * factor)


def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The forward solver on a flat state vector ``y0`` (n,): ys (len(ts), n)."""
    dt_type = aval_of(y0).dtype

    def fun(y, t):
        return fnp.asarray(func(y, t, *args)).astype(dt_type)

    def scan_fun(carry, target_t):
        def cond_fun(state):
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body_fun(state):
            i, y, f, t, dt, last_t, coeffs = state
            next_y, next_f, err, ks = _rk_step(fun, y, f, t, dt)
            ratio = _error_ratio(err, rtol, atol, y, next_y)
            new_coeffs = _interp_fit(y, next_y, ks, dt)
            new_dt = fnp.clip(_optimal_step_size(dt, ratio), 0.0, hmax).astype(dt_type)
            accept = ratio <= 1.0
            return (i + 1, fnp.where(accept, next_y, y), fnp.where(accept, next_f, f),
                    fnp.where(accept, t + dt, t), new_dt, fnp.where(accept, t, last_t),
                    fnp.where(accept, new_coeffs, coeffs))

        _, y, f, t, dt, last_t, coeffs = lax.while_loop(cond_fun, body_fun, (np.float64(0),) + carry)
        span = t - last_t
        rel = (target_t - last_t) / fnp.where(span == 0, 1.0, span)
        return (y, f, t, dt, last_t, coeffs), _polyval(coeffs, rel)

    t0 = ts[0]
    f0 = fun(y0, t0)
    dt = fnp.clip(_initial_step_size(fun, t0, y0, 4, rtol, atol, f0), 0.0, hmax).astype(dt_type)
    coeffs = fnp.stack([y0] * 5)
    _, ys = lax.scan(scan_fun, (y0, f0, t0, dt, t0, coeffs), ts[1:])
    return fnp.concatenate([y0[None], ys])


_odeint = custom_vjp(_solve, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res
    ys, ts, g = fnp.asarray(ys), fnp.asarray(ts), fnp.asarray(g)  # indexed by the scan's counter

    def aug_dynamics(state, t, *args):
        # ``t`` is negated time: the adjoint system runs forwards in -t.
        y, y_bar, _, _ = state
        y_dot, pullback = vjp(lambda y_, t_, *a: func(y_, t_, *a), y, -t, *args)
        cts = pullback(y_bar)
        return -y_dot, cts[0], cts[1], tuple(cts[2:])

    def scan_fun(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = fnp.dot(func(ys[i], ts[i], *args), g[i])  # effect of moving the output time
        t0_bar = t0_bar - t_bar
        span = fnp.stack([-ts[i], -ts[i - 1]])
        _, y_bar, t0_bar, args_bar = odeint(aug_dynamics, (ys[i], y_bar, t0_bar, args_bar), span, *args,
                                            rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = pytree.tree_map(lambda x: x[1], (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    zero_t = fnp.zeros((), aval_of(ts).dtype)
    init = (g[-1], zero_t, pytree.tree_map(fnp.zeros_like, args))
    n = shape_of(ts)[0]
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(scan_fun, init, np.arange(n - 1, 0, -1))
    ts_bar = fnp.concatenate([t0_bar[None], rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)


def _ravel(tree):
    """(flat vector, unravel) for a pytree of arrays, in their common float dtype."""
    leaves, treedef = pytree.tree_flatten(tree)
    if not leaves:
        raise ValueError("odeint: y0 must contain at least one array")
    leaves = [_util.asarray(x, fname="odeint") for x in leaves]
    cast = _util.promote_dtypes_inexact(*leaves, fname="odeint")
    dtype = aval_of(cast[0]).dtype
    shapes = [shape_of(x) for x in leaves]
    dtypes_ = [aval_of(x).dtype if aval_of(x).dtype.kind == "f" else dtype for x in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    flat = fnp.concatenate([fnp.ravel(x) for x in cast]) if len(cast) > 1 else fnp.ravel(cast[0])

    def unravel(vec):
        parts, start = [], 0
        for shape, size, dt in zip(shapes, sizes, dtypes_):
            parts.append(fnp.reshape(vec[start:start + size], shape).astype(dt))
            start += size
        return pytree.tree_unflatten(treedef, parts)

    return flat, unravel


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """Solve ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0``; returns ``y`` at each
    time in ``t`` (increasing), stacked along a new leading axis of every leaf of the
    pytree ``y0``. ``rtol``/``atol`` bound the local error of each step, ``mxstep`` the
    steps between two output times (beyond it the solution stops advancing, as in
    JAX), ``hmax`` the step size."""
    if not callable(func):
        raise TypeError(f"odeint: func must be callable, got {type(func).__name__}")
    for name, value in (("rtol", rtol), ("atol", atol), ("mxstep", mxstep), ("hmax", hmax)):
        if not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"odeint: {name} must be a Python number (it is static), got {type(value).__name__}")
    for leaf in pytree.tree_leaves(args):
        _util.check_arraylike("odeint", leaf)
    _util.check_arraylike("odeint", t)
    ts = _util.asarray(t, fname="odeint")
    (ts,) = _util.promote_dtypes_inexact(ts, fname="odeint")
    if len(shape_of(ts)) != 1 or shape_of(ts)[0] < 1:
        raise ValueError(f"odeint: t must be a 1-d array of at least one time, got shape {shape_of(ts)}")
    flat, unravel = _ravel(y0)
    ts = ts.astype(aval_of(flat).dtype)
    y_tree = pytree.tree_structure(y0)
    y_shapes = [shape_of(x) for x in pytree.tree_leaves(y0)]

    def flat_func(y, t_, *a):
        out = func(unravel(y), t_, *a)
        out_leaves, out_tree = pytree.tree_flatten(out)
        if out_tree != y_tree:
            raise ValueError(f"odeint: func must return the structure of y0 ({y_tree}), got {out_tree}")
        for leaf, shape in zip(out_leaves, y_shapes):
            if shape_of(leaf) != shape:
                raise ValueError(f"odeint: func returned shape {shape_of(leaf)} for a y0 leaf of shape {shape}")
        return _ravel(out)[0]

    # Values ``func`` closes over that a transform traces (``grad`` w.r.t. a parameter
    # used inside ``func``) become explicit arguments, so the adjoint differentiates
    # them too, as JAX's odeint does.
    converted, consts = closure_convert(flat_func, flat, ts[0], *args)
    if consts:
        flat_func = converted
    ys = _odeint(flat_func, float(rtol), float(atol), float(mxstep), float(hmax), flat, ts, *args, *consts)
    return vmap(unravel)(ys)
