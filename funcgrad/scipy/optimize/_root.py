"""Root finding for ``F: R^n -> R^n``, in ``lax.while_loop``s (``jit``/``vmap`` ready),
with exact Jacobians from ``jacfwd``:

- ``"hybr"``: Powell's dogleg trust region (the method of MINPACK's ``hybrj``, which
  SciPy's default ``hybr`` calls; here every iteration uses the exact Jacobian instead
  of Broyden rank-one updates), initial radius ``factor * |x0|`` as MINPACK;
- ``"newton"``: Newton's method with Armijo backtracking on ``|F|^2 / 2``.

Both stop when a step changes ``x`` by at most ``xtol`` relatively, or ``F`` is zero.
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.transforms.ad_api import jacfwd


def _norm(x):
    return fnp.sqrt(fnp.sum(x * x))


def _newton_direction(f, j):
    step = fnp.linalg.solve(j, -f[:, None])[:, 0]
    return step, fnp.all(fnp.isfinite(step))


def solve_newton(fun, x0, xtol, maxiter):
    jac = jacfwd(fun)
    i64 = np.int64

    def body(state):
        x, f = state["x"], state["f"]
        step, ok = _newton_direction(f, jac(x))
        step = fnp.where(ok, step, 0.0)
        merit = fnp.dot(f, f)

        def bt_cond(s):  # Armijo on |F|^2 (the Newton step has slope -2|F|^2)
            return (s["k"] < 30) & ~(fnp.dot(s["f"], s["f"]) <= (1.0 - 1e-4 * s["alpha"]) * merit)

        def bt_body(s):
            alpha = s["alpha"] * 0.5
            return dict(alpha=alpha, f=fun(x + alpha * step), k=s["k"] + 1)

        first = dict(alpha=fnp.ones((), x.dtype), f=fun(x + step), k=i64(0))
        bt = lax.while_loop(bt_cond, bt_body, first)
        new_x = x + bt["alpha"] * step
        small = _norm(bt["alpha"] * step) <= xtol * (xtol + _norm(new_x))
        return dict(x=new_x, f=bt["f"], nit=state["nit"] + 1, nfev=state["nfev"] + bt["k"] + 1,
                    njev=state["njev"] + 1, done=(small & ok) | ~fnp.any(bt["f"] != 0), failed=~ok | (bt["k"] >= 30))

    f0 = fun(x0)
    state = dict(x=x0, f=f0, nit=i64(0), nfev=i64(1), njev=i64(0), done=~fnp.any(f0 != 0), failed=fnp.asarray(False))
    state = lax.while_loop(lambda s: ~s["done"] & ~s["failed"] & (s["nit"] < maxiter), body, state)
    return state


def _dogleg(f, j, delta):
    """The dogleg step inside the trust radius ``delta`` for the model |F + J p|."""
    p_newton, ok = _newton_direction(f, j)
    g = j.T @ f  # gradient of |F|^2 / 2
    jg = j @ g
    g_norm = _norm(g)
    p_cauchy = -(fnp.dot(g, g) / fnp.where(fnp.dot(jg, jg) == 0, 1.0, fnp.dot(jg, jg))) * g
    boundary_sd = -(delta / fnp.where(g_norm == 0, 1.0, g_norm)) * g
    # from the Cauchy point towards the Newton point, up to the boundary: |pc + t d| = delta
    d = p_newton - p_cauchy
    a, b, c = fnp.dot(d, d), 2.0 * fnp.dot(p_cauchy, d), fnp.dot(p_cauchy, p_cauchy) - delta ** 2
    t = (-b + fnp.sqrt(fnp.maximum(b * b - 4 * a * c, 0.0))) / (2 * fnp.where(a == 0, 1.0, a))
    dogleg = p_cauchy + t * d
    inside = ok & (_norm(p_newton) <= delta)
    step = fnp.where(inside, p_newton, fnp.where(~ok | (_norm(p_cauchy) >= delta), boundary_sd, dogleg))
    return step


def solve_hybr(fun, x0, xtol, maxiter, factor=100.0):
    jac = jacfwd(fun)
    i64 = np.int64

    def body(state):
        x, f, delta = state["x"], state["f"], state["delta"]
        j = jac(x)
        step = _dogleg(f, j, delta)
        f_new = fun(x + step)
        predicted = fnp.dot(f, f) - fnp.sum((f + j @ step) ** 2)
        actual = fnp.dot(f, f) - fnp.dot(f_new, f_new)
        rho = actual / fnp.where(predicted > 0, predicted, 1.0)
        rho = fnp.where(predicted > 0, rho, -1.0)
        p_norm = _norm(step)
        delta = fnp.where(rho < 0.25, 0.25 * p_norm, fnp.where((rho > 0.75) & (p_norm >= 0.99 * delta),
                                                               2.0 * delta, delta))
        accept = rho > 1e-4
        new_x = fnp.where(accept, x + step, x)
        new_f = fnp.where(accept, f_new, f)
        small = (accept & (p_norm <= xtol * (xtol + _norm(new_x)))) | (delta <= xtol * _norm(new_x))
        return dict(x=new_x, f=new_f, delta=delta, nit=state["nit"] + 1, nfev=state["nfev"] + 1,
                    njev=state["njev"] + 1, done=small | ~fnp.any(new_f != 0),
                    failed=~fnp.all(fnp.isfinite(new_f)) | ~(delta > 0))

    f0 = fun(x0)
    x_norm = _norm(x0)
    delta0 = factor * fnp.where(x_norm == 0, 1.0, x_norm)
    state = dict(x=x0, f=f0, delta=delta0.astype(x0.dtype), nit=i64(0), nfev=i64(1), njev=i64(0),
                 done=~fnp.any(f0 != 0), failed=fnp.asarray(False))
    return lax.while_loop(lambda s: ~s["done"] & ~s["failed"] & (s["nit"] < maxiter), body, state)
