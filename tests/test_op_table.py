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
