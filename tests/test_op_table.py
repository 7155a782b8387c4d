"""Runs every op-table row: eager vs NumPy, and evaluated jaxpr vs eager."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.core.pytree import tree_flatten, tree_unflatten
from harness import assert_same
from op_rows import all_rows

ROWS = all_rows()


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_eager_matches_numpy(row):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = row.ref(*row.args)
        got = row.fun(*row.args)
    assert_same(got, expected, row.rtol, row.atol)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_jaxpr_eval_matches_eager(row):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        eager = row.fun(*row.args)
        closed = fg.make_jaxpr(row.fun)(*row.args)
        fg.check_jaxpr(closed)
        leaves, _ = tree_flatten(row.args)
        out = tree_unflatten(closed.out_tree, fg.eval_closed_jaxpr(closed, *leaves))
    # The staged program may hold Python scalars as weak values; compare values/dtypes.
    assert_same(out, eager, row.rtol, row.atol, check_type=False, what="jaxpr eval")


def _grad_argnums(row):
    if row.diff is not None:
        return tuple(row.diff)
    return tuple(
        i for i, a in enumerate(row.args)
        if isinstance(a, (float, np.floating)) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
    )


def _as_f64(a):
    # Finite differences need float64; float32 rows are checked at float64 precision.
    return np.asarray(a, np.float64) if np.asarray(a).dtype == np.float32 else a


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_grads_match_finite_differences(row):
    """jvp vs central differences and vjp vs jvp, to second order (check_grads)."""
    argnums = _grad_argnums(row)
    if "no_grad" in row.tags:
        pytest.skip(row.tags["no_grad"])
    if not argnums:
        pytest.skip("no floating-point arguments")
    base = [_as_f64(a) for a in row.args]

    def f(*diff_args):
        full = list(base)
        for i, v in zip(argnums, diff_args):
            full[i] = v
        return row.fun(*full)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fg.test_util.check_grads(f, tuple(base[i] for i in argnums), order=2, modes=("fwd", "rev"))
