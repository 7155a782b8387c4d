"""Error messages and staging behaviour of funcgrad.numpy creation, products and
linalg.norm that the op table cannot express."""
import re

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationError


# --- products: errors name the function and the shapes ---------------------------------
def test_matmul_shape_mismatch_names_matmul_and_both_shapes():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        fnp.matmul(np.ones((2, 3)), np.ones((4, 5)))


def test_matmul_batch_mismatch():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3, 4\).*\(3, 4, 5\)"):
        fnp.matmul(np.ones((2, 3, 4)), np.ones((3, 4, 5)))


def test_matmul_scalar_operand_is_an_error():
    with pytest.raises(ValueError, match="matmul.*0-d"):
        fnp.matmul(2.0, np.ones(3))


def test_matmul_mismatch_under_tracing():
    with pytest.raises(ValueError, match="matmul"):
        fg.make_jaxpr(fnp.matmul)(np.ones((2, 3)), np.ones(4))


def test_dot_mismatch():
    with pytest.raises(ValueError, match=re.escape("dot: shapes (2, 3) and (4,) not aligned: 3 (dim 1) != 4 (dim 0)")):
        fnp.dot(np.ones((2, 3)), np.ones(4))


def test_vdot_inner_tensordot_mismatch():
    with pytest.raises(ValueError, match="vdot"):
        fnp.vdot(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="inner"):
        fnp.inner(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ValueError, match="tensordot: shape-mismatch"):
        fnp.tensordot(np.ones((2, 3)), np.ones((4, 5)), 1)
    with pytest.raises(ValueError, match="tensordot"):
        fnp.tensordot(np.ones((2, 3)), np.ones((3, 5)), ([1], [0, 1]))


@pytest.mark.parametrize("spec, shapes, message", [
    ("ij,jk->ik", [(2, 3)], "name 2 operands but 1"),
    ("ij,jk->ik", [(2, 3), (4, 5)], "size of label 'j'"),
    ("ij->ik", [(2, 3)], "output label 'k'"),
    ("ij->ii", [(2, 3)], "repeat"),
    ("i1,j->ij", [(2, 3), (3,)], "invalid subscript character"),
    ("ijk->i", [(2, 3)], "operand 0 has 2 dimensions"),
    ("i->i->i", [(2,)], "invalid subscripts"),
    ("i.j", [(2, 3)], "invalid subscript"),
    ("...i->i", [(2, 3)], "output needs '...'"),
])
def test_einsum_bad_subscripts(spec, shapes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        fnp.einsum(spec, *[np.ones(s) for s in shapes])


def test_einsum_needs_operands_and_valid_sublists():
    with pytest.raises(ValueError):
        fnp.einsum("i")
    with pytest.raises(TypeError, match="sublist"):  # (the sublist form itself is supported)
        fnp.einsum(np.ones(3), ["a"])


def test_cross_bad_dimension():
    with pytest.raises(ValueError, match="cross.*2 or 3"):
        fnp.cross(np.ones(4), np.ones(3))


def test_dot_rejects_strings():
    with pytest.raises(TypeError, match="dot"):
        fnp.dot("ab", np.ones(2))


# --- products: eager value types ---------------------------------------------------------
def test_scalar_results_are_0d_values():
    # One type for every 0-d result, as JAX (NumPy gives scalars here, a 0-d array for tensordot)
    v = np.arange(3.0)
    for out in (fnp.dot(v, v), fnp.vdot(v, v), fnp.inner(v, v), fnp.matmul(v, v), fnp.einsum("i,i", v, v),
                fnp.tensordot(v, v, 1)):
        assert type(out) is fg.Array and out.shape == () and out.dtype == np.float64 and not out.flags.writeable


def test_matmul_operator_on_tracers():
    f = lambda a, b: a @ b  # noqa: E731
    closed = fg.make_jaxpr(f)(np.ones((2, 3)), np.ones((3, 4)))
    assert "dot_general" in str(closed)


# --- creation: staging and errors ---------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: fnp.zeros((300, 300)), lambda: fnp.eye(300), lambda: fnp.tri(200, 300),
    lambda: fnp.arange(100000), lambda: fnp.linspace(0, 1, 100000), lambda: fnp.full((50, 50), 3.0),
])
def test_creation_stages_no_large_constants(make):
    closed = fg.make_jaxpr(make)()
    assert all(np.size(c) <= 1 for c in closed.consts), str(closed)
    assert len(str(closed)) < 2000


def test_eager_creation_is_a_read_only_value_with_a_writeable_copy():
    # issue #12: eager results are values (read-only funcgrad.Array); .copy() is the user's
    for x in (fnp.zeros(3), fnp.ones((2, 2)), fnp.full(2, 1.0), fnp.eye(2), fnp.arange(3),
              fnp.linspace(0, 1, 3), fnp.zeros_like(np.ones(2)), fnp.full_like(np.ones(2), 5),
              *fnp.meshgrid(np.arange(2), np.arange(3))):
        assert isinstance(x, np.ndarray) and type(x) is fg.Array and not x.flags.writeable
        y = x.copy()
        assert type(y) is np.ndarray and y.flags.writeable


def test_arange_needs_static_bounds():
    with pytest.raises(ConcretizationError, match="arange"):
        fg.make_jaxpr(lambda n: fnp.arange(n))(np.int64(3))


def test_arange_zero_step():
    with pytest.raises(ZeroDivisionError):
        fnp.arange(0, 5, 0)


def test_creation_argument_errors():
    with pytest.raises(ValueError, match="linspace.*non-negative"):
        fnp.linspace(0, 1, -1)
    with pytest.raises(ValueError, match="zeros.*negative"):
        fnp.zeros((2, -1))
    with pytest.raises(ValueError, match="diag.*1-d or 2-d"):
        fnp.diag(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="tril"):
        fnp.tril(np.float64(1.0))
    with pytest.raises(ValueError, match="meshgrid"):
        fnp.meshgrid(np.ones(2), indexing="yx")
    with pytest.raises(TypeError, match="full"):
        fnp.full(3, "x")
    with pytest.raises(fg.errors.UnsupportedDtypeError):
        fnp.zeros(3, dtype=np.float16)


def test_linspace_traced_bounds_and_gradient_shape():
    closed = fg.make_jaxpr(lambda a, b: fnp.linspace(a, b, 4))(1.0, 2.0)
    out = fg.eval_closed_jaxpr(closed, 1.0, 2.0)[0]
    np.testing.assert_array_equal(out, np.linspace(1.0, 2.0, 4))


# --- linalg.norm ------------------------------------------------------------------------
@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_norm_svd_orders(ord):
    m = np.array([[2.0, 1.0], [0.5, 3.0]])
    np.testing.assert_allclose(fnp.linalg.norm(m, ord=ord), np.linalg.norm(m, ord=ord), rtol=1e-13)


def test_norm_errors():
    with pytest.raises(ValueError, match="vectors"):
        fnp.linalg.norm(np.ones(3), ord="fro")
    with pytest.raises(ValueError, match="matrices"):
        fnp.linalg.norm(np.ones((2, 2)), ord=3)
    with pytest.raises(ValueError, match="dimensions"):
        fnp.linalg.norm(np.ones((2, 2, 2)), ord=1)
    with pytest.raises(ValueError, match="duplicate"):
        fnp.linalg.norm(np.ones((2, 2)), axis=(0, -2))
    with pytest.raises(np.exceptions.AxisError):
        fnp.linalg.norm(np.ones(3), axis=1)


# --- einsum: differential test against numpy.einsum on random subscripts ----------------
def _random_einsum_case(rng):
    sizes = {c: int(rng.integers(1, 4)) for c in "abcde"}
    ell = tuple(int(d) for d in rng.integers(1, 3, size=rng.integers(0, 3)))
    use_ell = rng.random() < 0.3
    terms, ops = [], []
    for _ in range(int(rng.integers(1, 4))):
        t = "".join(rng.choice(list("abcde"), size=rng.integers(0, 4)))
        shape = [sizes[c] for c in t]
        if use_ell and rng.random() < 0.7:
            e = tuple(1 if rng.random() < 0.3 else d for d in ell[len(ell) - rng.integers(0, len(ell) + 1):])
            pos = int(rng.integers(0, len(t) + 1))
            t, shape = t[:pos] + "..." + t[pos:], shape[:pos] + list(e) + shape[pos:]
        terms.append(t)
        ops.append(rng.normal(size=shape))
    spec = ",".join(terms)
    if rng.random() < 0.6:  # explicit output: a random subset of the labels, any order
        labels = sorted(set("".join(terms).replace(".", "")))
        out = "".join(rng.permutation(labels)[: rng.integers(0, len(labels) + 1)]) if labels else ""
        if "..." in spec:
            pos = int(rng.integers(0, len(out) + 1))
            out = out[:pos] + "..." + out[pos:]
        spec += "->" + out
    return spec, ops


def test_einsum_matches_numpy_on_random_subscripts():
    rng = np.random.default_rng(7)
    for _ in range(300):
        spec, ops = _random_einsum_case(rng)
        expected = np.einsum(spec, *ops)
        got = fnp.einsum(spec, *ops)
        closed = fg.make_jaxpr(lambda *o: fnp.einsum(spec, *o))(*ops)
        fg.check_jaxpr(closed)
        staged = fg.eval_closed_jaxpr(closed, *ops)[0]
        # funcgrad's read-only ndarray subclass, 0-d results too (NumPy gives scalars)
        assert type(got) is fg.Array and np.shape(got) == np.shape(expected), spec
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=spec)
        np.testing.assert_allclose(staged, expected, rtol=1e-12, atol=1e-12, err_msg=spec)
