"""funcgrad.numpy NaN statistics (numpy_api/nanfunctions.py) and cov/corrcoef
(numpy_api/statistics.py): the JAX-style corners (all-NaN argmax, traced q), result
types, random agreement with NumPy, and typed errors."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def test_nanargmax_of_an_all_nan_slice_is_minus_one():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    np.testing.assert_array_equal(fnp.nanargmax(x, axis=1), [-1, 0])
    np.testing.assert_array_equal(fg.jit(lambda x: fnp.nanargmin(x, axis=1))(x), [-1, 0])


def test_nanquantile_with_a_traced_q():
    x = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 0.5, np.nan, np.nan]])
    q = np.array([0.2, 0.5])
    got = fg.jit(lambda x, q: fnp.nanquantile(x, q, axis=1))(x, q)
    np.testing.assert_allclose(got, np.nanquantile(x, q, axis=1), rtol=1e-15)
    got = fg.vmap(lambda q: fnp.nanpercentile(x, q, axis=1))(np.array([10.0, 90.0]))
    np.testing.assert_allclose(got, np.nanpercentile(x, [10.0, 90.0], axis=1), rtol=1e-15)


def test_result_types_match_numpy():
    x = np.array([1.0, np.nan, 3.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("nanargmax", "nanargmin", "nanprod", "nanvar", "nanstd", "nanmedian"):
            got, want = getattr(fnp, name)(x), getattr(np, name)(x)
            assert type(got) is fg.Array and got.shape == () and got.dtype == want.dtype, name
        assert type(fnp.nanquantile(x, 0.3)) is fg.Array
        assert fnp.nanquantile(x.astype(np.float32), 0.3).dtype == np.float32
    assert np.ndim(fnp.cov(x[[0, 2, 3]])) == 0


@pytest.mark.parametrize("seed", range(3))
def test_random_nan_statistics_agree_with_numpy(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(4, 7))
    x[rng.random(x.shape) < 0.3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in (0, 1, None):
            for name in ("nanvar", "nanstd", "nanmedian", "nanprod"):
                np.testing.assert_allclose(getattr(fnp, name)(x, axis=axis), getattr(np, name)(x, axis=axis),
                                           rtol=1e-13, err_msg=f"{name} axis={axis}")
            np.testing.assert_allclose(fnp.nanquantile(x, [0.1, 0.9], axis=axis),
                                       np.nanquantile(x, [0.1, 0.9], axis=axis), rtol=1e-13)


def test_cov_and_corrcoef_derivatives():
    m = np.random.default_rng(3).normal(size=(2, 5))
    fg.test_util.check_grads(lambda m: fnp.cov(m, aweights=np.arange(1.0, 6.0)), (m,), order=2)
    fg.test_util.check_grads(lambda m: fnp.corrcoef(m)[0, 1], (m,), order=2)
    fg.test_util.check_grads(lambda w: fnp.cov(m, aweights=w, ddof=1), (np.arange(1.0, 6.0),), order=2)


@pytest.mark.parametrize("call,exc,pattern", [
    (lambda: fnp.nanquantile(np.ones(3), 1.5), ValueError, r"nanquantile: quantiles must be in the range \[0, 1\]"),
    (lambda: fnp.nanpercentile(np.ones(3), -1), ValueError, r"nanpercentile: .*\[0, 100\]"),
    (lambda: fnp.nanquantile(np.ones(3), 0.5, method="nearest"), NotImplementedError, "nanquantile: only"),
    (lambda: fnp.nanquantile(np.ones((2, 2)), np.ones((2, 2)) / 2), ValueError, "nanquantile: q must be a scalar"),
    (lambda: fnp.nanquantile(np.ones(3, bool), 0.5), TypeError, "nanquantile: boolean"),
    (lambda: fnp.nanquantile(np.zeros((0,)), 0.5), IndexError, r"nanquantile: .*empty axis"),
    (lambda: fnp.nanargmax(np.zeros((0,))), ValueError, "nanargmax: attempt to get nanargmax of an empty"),
    (lambda: fnp.nanvar(np.ones(3), out=np.ones(())), NotImplementedError, "nanvar: out="),
    (lambda: fnp.cov(np.ones((2, 2, 2))), ValueError, r"cov: m has more than 2 dimensions.*\(2, 2, 2\)"),
    (lambda: fnp.cov(np.ones((2, 3)), np.ones((2, 4))), ValueError, "cov: m and y must have the same number"),
    (lambda: fnp.cov(np.ones((2, 3)), fweights=np.array([1.5, 1, 1])), TypeError, "cov: fweights must be integer"),
    (lambda: fnp.cov(np.ones((2, 3)), aweights=np.array([-1.0, 1, 1])), ValueError, "cov: aweights cannot be neg"),
    (lambda: fnp.cov(np.ones((2, 3)), aweights=np.ones(4)), RuntimeError, r"cov: incompatible.*\(4 != 3\)"),
    (lambda: fnp.cov(np.ones((2, 3)), ddof=1.5), ValueError, "cov: ddof must be an integer"),
])
def test_bad_arguments_raise_typed_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
