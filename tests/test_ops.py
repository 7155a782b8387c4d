"""funcgrad.ops segment reductions beyond the op-table rows (tests/op_rows/ops.py):
derivatives at ties and zeros, JAX's identities and modes, static num_segments, errors."""
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import ops
from funcgrad.errors import ConcretizationError

from harness import fd_grad

IDS = np.array([0, 1, 0, 2, 1, 1])


def test_empty_segments_hold_the_identity_and_bad_ids_are_dropped():
    x = np.array([1.0, 2.0, 3.0])
    ids = np.array([0, -1, 9])
    for f, ident in ((ops.segment_sum, 0.0), (ops.segment_prod, 1.0), (ops.segment_max, -np.inf),
                     (ops.segment_min, np.inf)):
        out = f(x, ids, num_segments=3)
        np.testing.assert_array_equal(out, [1.0, ident, ident])
    xi = np.array([4, 5], np.int32)
    assert ops.segment_max(xi, np.array([0, 0]), 2).tolist() == [5, np.iinfo(np.int32).min]
    assert ops.segment_min(xi, np.array([1, 1]), 2).dtype == np.int32


def test_num_segments_defaults_to_max_id_plus_one_and_mode_clip_clamps():
    x = np.arange(4.0)
    np.testing.assert_array_equal(ops.segment_sum(x, np.array([0, 3, 3, 1])), [0.0, 3.0, 0.0, 3.0])
    np.testing.assert_array_equal(ops.segment_sum(x, np.array([0, 5, -2, 1]), 2, mode="clip"), [2.0, 4.0])


def test_segment_max_gradient_is_shared_among_ties():
    x = np.array([2.0, 1.0, 2.0, 5.0, 1.0, 0.0])
    g = fg.grad(lambda x: ops.segment_max(x, IDS, 3).sum())(x)
    np.testing.assert_array_equal(g, [0.5, 0.5, 0.5, 1.0, 0.5, 0.0])
    g = fg.grad(lambda x: ops.segment_min(x, IDS, 3).sum())(x)
    np.testing.assert_array_equal(g, [0.5, 0.0, 0.5, 1.0, 0.0, 1.0])


@pytest.mark.parametrize("x", [np.array([2.0, 3.0, 0.0, 1.5, 0.0, 0.5]),   # a segment with two zeros
                               np.array([2.0, 3.0, 0.0, 1.5, -1.0, 0.5])])  # a segment with one zero
def test_segment_prod_gradient_is_exact_with_zeros(x):
    f = lambda x: (ops.segment_prod(x, IDS, 3) * np.array([1.0, 2.0, 3.0])).sum()  # noqa: E731
    np.testing.assert_allclose(fg.grad(f)(x), fd_grad(f, x), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(fg.jit(fg.grad(f))(x), fd_grad(f, x), rtol=1e-8, atol=1e-9)
    fg.test_util.check_grads(f, (x + 0.25,), order=2)


def test_vmap_over_segment_ids_matches_a_loop():
    x = np.random.default_rng(0).normal(size=6)
    ids = np.stack([IDS, IDS[::-1], np.zeros(6, np.int64)])
    got = fg.vmap(lambda i: ops.segment_max(x, i, 3))(ids)
    np.testing.assert_array_equal(got, np.stack([ops.segment_max(x, i, 3) for i in ids]))


def test_num_segments_must_be_static_under_jit():
    x = np.ones(6)
    with pytest.raises(ConcretizationError, match="segment_sum: num_segments=None needs concrete segment_ids"):
        fg.jit(lambda x, i: ops.segment_sum(x, i))(x, IDS)
    with pytest.raises(ConcretizationError, match="segment_max: num_segments must be a static"):
        fg.jit(lambda x, n: ops.segment_max(x, IDS, n))(x, 3)
    out = fg.jit(lambda x, i: ops.segment_sum(x, i, num_segments=3))(x, IDS)
    assert out.tolist() == [2.0, 3.0, 1.0]


@pytest.mark.parametrize("call, exc, words", [
    (lambda: ops.segment_sum(np.ones(3), np.array([0, 1])), ValueError, ["segment_sum", "segment_ids", "i64[2]", "f64[3]"]),
    (lambda: ops.segment_sum(np.ones(3), np.array([0.0, 1.0, 1.0])), ValueError, ["segment_sum", "integer"]),
    (lambda: ops.segment_prod(np.ones(2), np.array([0, 1]), -1), ValueError, ["segment_prod", "num_segments"]),
    (lambda: ops.segment_min(np.ones(2), np.array([0, 1]), 2, mode="wrap"), ValueError, ["segment_min", "mode"]),
    (lambda: ops.segment_max(np.array([True]), np.array([0]), 1), TypeError, ["segment_max", "data", "bool"]),
])
def test_bad_arguments_raise_typed_errors(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value), (w, str(info.value))
