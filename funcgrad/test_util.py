"""Testing helpers for users and for funcgrad's own suite.

``check_grads(f, args, order=2, modes=("fwd", "rev"))`` compares forward mode with
central finite differences (float64), reverse mode with forward mode through the
identity <ct, J t> == <J^T ct, t>, and recurses for higher orders by checking the
jvp/vjp functions themselves.

Complex arguments get complex random tangents (every direction, real and imaginary, at
once), and the pairing is JAX's: <a, b> = Re(sum(a * b)), no conjugation.
"""
from __future__ import annotations

import numpy as np

from funcgrad.core import pytree
from funcgrad.core.trace import get_aval_any


def _rand_like(rng, x):
    aval = get_aval_any(x)
    if aval.dtype.kind == "c":
        z = rng.standard_normal(aval.shape) + 1j * rng.standard_normal(aval.shape)
        return np.asarray(z.astype(aval.dtype))
    if aval.dtype.kind != "f":
        return np.zeros(aval.shape, np.float64)
    return np.asarray(rng.standard_normal(aval.shape).astype(aval.dtype))


def _is_float(x) -> bool:
    return get_aval_any(x).dtype.kind in "fc"


def _wide(x):
    """``x`` in float64, or complex128 for complex values."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _axpy(a, t, x):
    if not _is_float(x):
        return x
    return np.asarray(x) + a * np.asarray(t, dtype=np.asarray(x).dtype)


def _vdot(xs, ys) -> float:
    total = 0.0
    for x, y in zip(pytree.tree_leaves(xs), pytree.tree_leaves(ys)):
        total += float(np.real(np.sum(_wide(x) * _wide(y))))
    return total


def _close(name, got, want, atol, rtol, primal_out=None):
    kinds = [get_aval_any(o).dtype.kind for o in pytree.tree_leaves(primal_out)] if primal_out is not None else None
    for i, (g, w) in enumerate(zip(pytree.tree_leaves(got), pytree.tree_leaves(want))):
        g, w = _wide(g), _wide(w)
        if kinds is not None and kinds[i] not in "fc":
            # Integer/boolean outputs are piecewise constant: the tangent must be zero
            # (finite differences across a jump would be meaningless).
            if np.any(g != 0):
                raise AssertionError(f"{name}: non-float output {i} has a non-zero tangent")
            continue
        if g.shape != w.shape:
            raise AssertionError(f"{name}: shape {g.shape} vs {w.shape}")
        if not np.allclose(g, w, atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(g - w)) if g.size else 0.0
            raise AssertionError(
                f"{name}: max abs error {err:.3g} (atol={atol}, rtol={rtol})\ngot:\n{g}\nexpected:\n{w}"
            )


def numerical_jvp(f, args, tangents, eps):
    """The central difference ``(f(args + eps*t) - f(args - eps*t)) / (2*eps)``."""
    plus = f(*[_axpy(eps, t, x) for x, t in zip(args, tangents)])
    minus = f(*[_axpy(-eps, t, x) for x, t in zip(args, tangents)])
    return pytree.tree_map(
        lambda p, m: (_wide(p) - _wide(m)) / (2 * eps), plus, minus
    )


def check_jvp(f, args, *, eps=1e-5, atol=1e-5, rtol=1e-5, rng=None):
    """Check ``jvp(f)`` against central differences in a random tangent direction;
    raises ``AssertionError`` naming the mismatch."""
    from funcgrad.transforms.ad_api import jvp

    rng = rng or np.random.default_rng(0)
    tangents = tuple(_rand_like(rng, x) for x in args)
    out, t_out = jvp(f, tuple(args), tangents)
    _close("jvp primal output", out, f(*args), atol, rtol)
    if any(get_aval_any(o).dtype in (np.float32, np.complex64) for o in pytree.tree_leaves(out)):
        # A float32 result limits finite differences to float32 accuracy.
        eps, atol, rtol = max(eps, 1e-3), max(atol, 2e-2), max(rtol, 2e-2)
    _close("jvp vs central finite differences", t_out, numerical_jvp(f, args, tangents, eps), atol, rtol, out)


def check_vjp(f, args, *, atol=1e-5, rtol=1e-5, rng=None):
    """Check ``vjp(f)`` against ``jvp(f)`` (``<vjp(ct), t> == <ct, jvp(t)>``) for random
    tangents and cotangents; raises ``AssertionError`` naming the mismatch."""
    from funcgrad.transforms.ad_api import jvp, vjp

    rng = rng or np.random.default_rng(1)
    out, vjp_fun = vjp(f, *args)
    ct = pytree.tree_map(lambda o: _rand_like(rng, o), out)
    ct_in = vjp_fun(ct)
    tangents = tuple(_rand_like(rng, x) for x in args)
    _, t_out = jvp(f, tuple(args), tangents)
    lhs, rhs = _vdot(ct, t_out), _vdot(ct_in, tangents)
    scale = max(1.0, abs(lhs), abs(rhs))
    if any(get_aval_any(o).dtype in (np.float32, np.complex64) for o in pytree.tree_leaves(out)):
        atol, rtol = max(atol, 1e-4), max(rtol, 1e-4)
    if abs(lhs - rhs) > atol + rtol * scale:
        raise AssertionError(f"vjp inconsistent with jvp: <ct, J t> = {lhs!r} but <J^T ct, t> = {rhs!r}")


def check_grads(f, args, order: int = 2, modes=("fwd", "rev"), *, eps=1e-5, atol=1e-5, rtol=1e-5):
    """Check derivatives of ``f`` at ``args`` (a tuple) up to ``order``, in ``modes``.

    >>> check_grads(lambda x: x * fnp.sin(x), (1.5,), order=2)
    """
    from funcgrad.transforms.ad_api import jvp, vjp

    args = tuple(args)
    rng = np.random.default_rng(42)
    for mode in modes:
        if mode == "fwd":
            check_jvp(f, args, eps=eps, atol=atol, rtol=rtol, rng=rng)
            if order > 1:
                tangents = tuple(_rand_like(rng, x) for x in args)
                check_grads(lambda *a: jvp(f, a, tangents)[1], args, order - 1, ("fwd",), eps=eps, atol=atol, rtol=rtol)
        elif mode == "rev":
            check_vjp(f, args, atol=atol, rtol=rtol, rng=rng)
            if order > 1:
                ct = pytree.tree_map(lambda o: _rand_like(rng, o), f(*args))
                check_grads(lambda *a: vjp(f, *a)[1](ct), args, order - 1, ("rev",), eps=eps, atol=atol, rtol=rtol)
        else:
            raise ValueError(f"check_grads: unknown mode {mode!r} (use 'fwd' and/or 'rev')")
