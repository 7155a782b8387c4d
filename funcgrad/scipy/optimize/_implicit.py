"""Implicit differentiation of a solution ``x*`` of ``F(x*, *args) = 0`` with respect to
``args``: ``dx* = -J_x^-1 (J_args dargs)`` (implicit function theorem), as a
``custom_jvp`` whose primal is the identity on an already computed ``x*``. The solver
that found ``x*`` is never differentiated (it runs on gradient-stopped ``args``), so
its iteration count and the route it took do not matter; only ``F`` at ``x*`` does.
The tangent is linear in ``dargs`` (a jvp of ``F``, then a linear solve), so reverse
mode transposes it, and the rule is itself differentiable (higher orders)."""
from __future__ import annotations

import funcgrad.numpy as fnp
from funcgrad.numpy_api._util import shape_of
from funcgrad.transforms.ad_api import jacfwd, jvp
from funcgrad.transforms.custom import custom_jvp


def _identity(fun, x, args):
    return x


_solution = custom_jvp(_identity, nondiff_argnums=(0,))


@_solution.defjvp
def _solution_jvp(fun, primals, tangents):
    x, args = primals
    _, args_dot = tangents
    x = _solution(fun, x, args)
    _, rhs = jvp(lambda a: fun(x, *a), (args,), (args_dot,))
    j_x = jacfwd(lambda y: fun(y, *args))(x)
    n = max(1, int(fnp.size(x)))
    step = fnp.linalg.solve(fnp.reshape(j_x, (n, n)), fnp.reshape(rhs, (n, 1)))
    return x, -fnp.reshape(step, shape_of(x))


def implicit_solution(fun, x, args):
    """``x`` (a root of ``fun(., *args)``), carrying ``d x / d args`` by the implicit
    function theorem. ``args`` is a tuple; ``fun(x, *args)`` has ``x``'s shape."""
    return _solution(fun, x, tuple(args))
