"""Edge inputs (NaN, inf) of recently added scipy names, checked against SciPy."""
import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as st

import funcgrad as fg
import funcgrad.scipy.special as fs
import funcgrad.scipy.stats as fst

X = np.array([-np.inf, -2.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, np.inf, np.nan])


def test_owens_t_nan_a_propagates():
    h = np.array([np.inf, -np.inf, 0.5, 0.0])
    a = np.array([np.nan, np.nan, np.nan, 1.0])
    np.testing.assert_allclose(fs.owens_t(h, a), ss.owens_t(h, a), equal_nan=True)


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_truncnorm_nan_x_is_nan(name):
    got = getattr(fst.truncnorm, name)(X, -1.0, 2.0)
    np.testing.assert_allclose(got, getattr(st.truncnorm, name)(X, -1.0, 2.0), rtol=1e-9, equal_nan=True)
    jitted = fg.jit(lambda x: getattr(fst.truncnorm, name)(x, -1.0, 2.0))(X)
    np.testing.assert_allclose(jitted, got, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_pareto_nan_x_is_nan(name):
    got = getattr(fst.pareto, name)(X, 2.5)
    np.testing.assert_allclose(got, getattr(st.pareto, name)(X, 2.5), rtol=1e-9, equal_nan=True)
