"""funcgrad.numpy selection (numpy_api/selection.py): what the op table cannot express
(the partition property against numpy.partition, size= under jit, typed errors), and
the docstring examples of the issue-#15 selection/sets/histograms/statistics/einsum
modules."""
import doctest
import importlib

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import DataDependentShapeError


@pytest.mark.parametrize("kth,axis", [(0, -1), (3, -1), ([1, 4], -1), (-1, 0), ((0, 2), 0), (5, None)])
def test_partition_property_against_numpy(kth, axis):
    x = np.random.default_rng(0).normal(size=(3, 6))
    got = np.asarray(fnp.partition(x, kth, axis=axis))
    want = np.partition(x, kth, axis=axis)
    ax = -1 if axis is None else axis
    got_m, want_m = (np.moveaxis(a, ax, -1) for a in (got, want))
    for k in np.atleast_1d(kth):
        k = int(k) % got_m.shape[-1]
        np.testing.assert_array_equal(got_m[..., k], want_m[..., k])  # the kth element in place
        assert np.all(got_m[..., :k] <= got_m[..., k:k + 1]) and np.all(got_m[..., k + 1:] >= got_m[..., k:k + 1])
    idx = np.asarray(fnp.argpartition(x, kth, axis=axis))
    src = x.ravel() if axis is None else x
    np.testing.assert_array_equal(np.take_along_axis(src, idx, axis=ax), got)


def test_partition_grad_follows_the_permutation():
    x = np.array([3.0, 1.0, 2.0])
    g = fg.grad(lambda x: fnp.partition(x, 1)[1] * 10 + fnp.partition(x, 1)[2])(x)
    np.testing.assert_array_equal(g, [1.0, 0.0, 10.0])


def test_nonzero_needs_size_under_jit_and_works_with_it():
    x = np.array([[0.0, 1.5], [2.0, 0.0], [0.0, 3.0]])
    for fn in (fnp.nonzero, fnp.where, fnp.argwhere, fnp.flatnonzero):
        with pytest.raises(DataDependentShapeError, match="size="):
            fg.jit(fn)(x)
    rows, cols = fg.jit(lambda x: fnp.where(x, size=4, fill_value=-1))(x)
    np.testing.assert_array_equal(rows, [0, 1, 2, -1])
    np.testing.assert_array_equal(cols, [1, 0, 1, -1])
    batched = fg.vmap(lambda r: fnp.flatnonzero(r, size=2))(x)
    np.testing.assert_array_equal(batched, [[1, 0], [0, 0], [1, 0]])


def test_bincount_length_under_jit_and_errors():
    x = np.array([0, 2, 2, 5])
    with pytest.raises(DataDependentShapeError, match="length="):
        fg.jit(fnp.bincount)(x)
    out = fg.jit(lambda x: fnp.bincount(x, length=4))(x)  # 5 is dropped (JAX's rule)
    np.testing.assert_array_equal(out, [1, 0, 2, 0])
    with pytest.raises(ValueError, match="bincount.*non-negative"):
        fnp.bincount(np.array([1, -1]))
    with pytest.raises(TypeError, match="bincount.*integers"):
        fnp.bincount(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"bincount: weights of shape \(2,\)"):
        fnp.bincount(x, np.ones(2))
    g = fg.grad(lambda w: fnp.sum(fnp.bincount(x, w) ** 2))(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(g, [2.0, 10.0, 10.0, 8.0])


def test_searchsorted_methods_agree_on_random_data():
    rng = np.random.default_rng(1)
    a = np.sort(rng.integers(0, 20, 50)).astype(np.float64)
    a[-3:] = np.nan
    v = np.concatenate([rng.integers(-2, 22, 40).astype(np.float64), [np.nan]])
    for side in ("left", "right"):
        want = np.searchsorted(a, v, side)
        for method in ("scan", "scan_unrolled", "sort", "compare_all"):
            np.testing.assert_array_equal(fnp.searchsorted(a, v, side, method=method), want)
            np.testing.assert_array_equal(fg.jit(lambda a, v: fnp.searchsorted(a, v, side, method=method))(a, v),
                                          want)


def test_digitize_traced_bins_pick_the_direction():
    x = np.array([0.2, 6.4, 3.0, 1.6])
    for bins in (np.array([0.0, 1.0, 2.5, 4.0]), np.array([4.0, 2.5, 1.0, 0.0])):
        for right in (False, True):
            got = fg.jit(lambda x, b: fnp.digitize(x, b, right))(x, bins)
            np.testing.assert_array_equal(got, np.digitize(x, bins, right))


@pytest.mark.parametrize("call,exc,pattern", [
    (lambda: fnp.nonzero(np.float64(1.0)), ValueError, "nonzero.*0d"),
    (lambda: fnp.nonzero(np.ones(3), size=-1), ValueError, "nonzero: size must be non-negative"),
    (lambda: fnp.nonzero(np.ones((2, 2)), size=2, fill_value=(1, 2, 3)), ValueError, "nonzero: fill_value.*3"),
    (lambda: fnp.partition(np.ones(4), 4), ValueError, r"partition: kth\(=4\) out of bounds.*size 4"),
    (lambda: fnp.argpartition(np.ones(4), 1.5), TypeError, "argpartition: kth must be an int"),
    (lambda: fnp.partition(np.ones(4), 1, kind="quick"), ValueError, "partition: kind"),
    (lambda: fnp.lexsort((np.ones(2), np.ones(3))), ValueError, r"lexsort: all keys.*\(2,\).*\(3,\)"),
    (lambda: fnp.lexsort(()), TypeError, "lexsort"),
    (lambda: fnp.searchsorted(np.ones((2, 2)), 1.0), ValueError, r"searchsorted: a must be 1-D.*\(2, 2\)"),
    (lambda: fnp.searchsorted(np.ones(2), 1.0, side="middle"), ValueError, "searchsorted: side"),
    (lambda: fnp.searchsorted(np.ones(2), 1.0, method="magic"), ValueError, "searchsorted: method"),
    (lambda: fnp.searchsorted(np.ones(2), 1.0, sorter=np.zeros(3, int)), ValueError, "searchsorted: sorter"),
    (lambda: fnp.digitize(np.ones(2), np.array([1.0, 3.0, 2.0])), ValueError, "digitize: bins must be monoton"),
    (lambda: fnp.digitize(np.ones(2), np.ones((2, 2))), ValueError, r"digitize: bins must be 1-D.*\(2, 2\)"),
    (lambda: fnp.where(np.ones(2), 1.0, 2.0, size=3), ValueError, "where: size and fill_value"),
    (lambda: fnp.nonzero("abc"), TypeError, "nonzero"),
])
def test_bad_arguments_raise_typed_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


_MODULES = ["einsum", "histograms", "nanfunctions", "selection", "sets", "statistics"]


@pytest.mark.parametrize("name", _MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"funcgrad.numpy_api.{name}")
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = doctest.DocTestFinder().find(module, globs={"fnp": fnp, "np": np})
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0, result
