"""BFGS as JAX's ``_src/scipy/optimize/bfgs.py``: an inverse-Hessian estimate updated
from each step, strong-Wolfe line search, everything in one ``lax.while_loop`` (so it
stages into ``jit`` and batches under ``vmap``: lanes iterate together, finished lanes
hold their state)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.scipy.optimize._line_search import line_search
from funcgrad.transforms.ad_api import value_and_grad


class BFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def _norm(x, ord):
    if ord == np.inf:
        return fnp.max(fnp.abs(x))
    return fnp.linalg.norm(x, ord=ord)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimise ``fun`` (R^n -> R) from the 1-d ``x0``; stop when ``norm(grad) < gtol``."""
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    d = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    i64 = np.int64
    state = dict(converged=_norm(g_0, norm) < gtol, failed=fnp.asarray(False), k=i64(0), nfev=i64(1), ngev=i64(1),
                 nhev=i64(0), x_k=x0, f_k=f_0, g_k=g_0, H_k=fnp.eye(d, dtype=x0.dtype),
                 old_old_fval=f_0 + fnp.linalg.norm(g_0) / 2, status=i64(0), line_search_status=i64(0))

    def body(state):
        p_k = -(state["H_k"] @ state["g_k"])
        ls = line_search(fun, state["x_k"], p_k, old_fval=state["f_k"], old_old_fval=state["old_old_fval"],
                         gfk=state["g_k"], maxiter=line_search_maxiter)
        s_k = ls.a_k * p_k
        y_k = ls.g_k - state["g_k"]
        rho_k = 1.0 / fnp.dot(y_k, s_k)
        w = fnp.eye(d, dtype=x0.dtype) - rho_k * s_k[:, None] * y_k[None, :]
        h_new = w @ state["H_k"] @ w.T + rho_k * s_k[:, None] * s_k[None, :]
        # A step with y.s == 0 gives no curvature information: keep the estimate.
        h_new = fnp.where(fnp.isfinite(rho_k), h_new, state["H_k"])
        return dict(state, nfev=state["nfev"] + ls.nfev, ngev=state["ngev"] + ls.ngev, failed=ls.failed,
                    line_search_status=fnp.asarray(ls.status).astype(np.int64),
                    converged=_norm(ls.g_k, norm) < gtol, k=state["k"] + 1, x_k=state["x_k"] + s_k, f_k=ls.f_k,
                    g_k=ls.g_k, H_k=h_new, old_old_fval=state["f_k"])

    def cond(state):
        return ~state["converged"] & ~state["failed"] & (state["k"] < maxiter)

    state = lax.while_loop(cond, body, state)
    failed_status = fnp.where(state["failed"], 2 + state["line_search_status"], -1)
    status = fnp.where(state["converged"], 0, fnp.where(state["k"] == maxiter, 1, failed_status))
    return BFGSResults(**dict(state, status=status))
