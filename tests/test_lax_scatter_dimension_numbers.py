"""lax.scatter_add/sub/mul/min/max with JAX's ScatterDimensionNumbers (the common form:
indexed axes inserted, whole windows over the rest), against NumPy's ufunc.at."""
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import lax

SDN = lax.ScatterDimensionNumbers
RNG = np.random.default_rng(0)
X = RNG.normal(size=(5, 3))
IDX = np.array([[0], [2], [0], [4]])
U = RNG.normal(size=(4, 3))
ROWS = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


@pytest.mark.parametrize("name,ufunc", [("scatter_add", np.add), ("scatter_mul", np.multiply),
                                        ("scatter_min", np.minimum), ("scatter_max", np.maximum)])
def test_rows_match_ufunc_at(name, ufunc):
    ref = X.copy()
    ufunc.at(ref, IDX[:, 0], U)
    np.testing.assert_allclose(getattr(lax, name)(X, IDX, U, ROWS), ref, rtol=1e-15)
    np.testing.assert_allclose(fg.jit(getattr(lax, name), static_argnums=3)(X, IDX, U, ROWS), ref, rtol=1e-15)


def test_scatter_sub_and_out_of_range_dropped():
    ref = X.copy()
    np.subtract.at(ref, IDX[:, 0], U)
    np.testing.assert_allclose(lax.scatter_sub(X, IDX, U, ROWS), ref)
    out = lax.scatter_add(X, np.array([[7], [1]]), U[:2], ROWS)  # row 7 does not exist: dropped, as JAX's default
    np.testing.assert_allclose(out, X + np.r_[[np.zeros(3)], [U[1]], np.zeros((3, 3))])


def test_other_axis_and_window_first_in_updates():
    xt = X.T.copy()  # (3, 5): index axis 1
    ref = xt.copy()
    np.add.at(ref.T, IDX[:, 0], U)
    dn = SDN(update_window_dims=(1,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,))
    np.testing.assert_allclose(lax.scatter_add(xt, IDX, U, dn), ref)
    dn = SDN(update_window_dims=(0,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,))
    np.testing.assert_allclose(lax.scatter_add(xt, IDX, U.T, dn), ref)


def test_points_with_permuted_index_vector():
    x = np.ones((3, 4))
    idx = np.array([[1, 0], [3, 2], [1, 0]])  # (column, row): scatter_dims_to_operand_dims=(1, 0)
    u = np.array([2.0, 3.0, 4.0])
    ref = x.copy()
    np.maximum.at(ref, (idx[:, 1], idx[:, 0]), u)
    np.testing.assert_array_equal(lax.scatter_max(x, idx, u, SDN((), (0, 1), (1, 0))), ref)


def test_gradients():
    g = fg.grad(lambda u: (lax.scatter_add(X, IDX, u, ROWS) ** 2).sum())(U)
    out = X.copy()
    np.add.at(out, IDX[:, 0], U)
    np.testing.assert_allclose(g, 2 * out[IDX[:, 0]])


def test_unsupported_and_bad_forms_are_typed_errors():
    with pytest.raises(NotImplementedError, match="partial update windows"):
        lax.scatter_add(X, np.array([[0, 0]]), np.ones((1, 3)), SDN((1,), (0,), (0, 1)))
    with pytest.raises(NotImplementedError, match="batching"):
        lax.scatter_add(X, IDX, U, SDN((1,), (0,), (0,), (1,), (0,)))
    with pytest.raises(ValueError, match=r"scatter_add: updates of shape \(4, 2\)"):
        lax.scatter_add(X, IDX, U[:, :2], ROWS)
    with pytest.raises(TypeError, match="ScatterDimensionNumbers"):
        lax.scatter_add(X, IDX, U, ((1,), (0,), (0,)))
