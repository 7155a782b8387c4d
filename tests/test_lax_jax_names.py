"""The rest of ``jax.lax``'s names in ``funcgrad.lax``, against NumPy/SciPy references
(loops over the definitions where NumPy has no one-call equivalent)."""
import math

import numpy as np
import pytest
import scipy.special as sp

import funcgrad as fg
from funcgrad import lax
from funcgrad.errors import ConcretizationError

rng = np.random.default_rng(0)


# --- gather with GatherDimensionNumbers -----------------------------------------------------

def _gather_reference(x, idx, dn, sizes, mode, fill=np.nan):
    kept = [d for d in range(x.ndim) if d not in dn.collapsed_slice_dims]
    batch = idx.shape[:-1]
    out_rank = len(batch) + len(kept)
    out = np.empty([0] * out_rank)
    pieces = []
    for b in np.ndindex(*batch):
        start = [0] * x.ndim
        ok = True
        for k, d in enumerate(dn.start_index_map):
            s = int(idx[b][k])
            ok &= 0 <= s <= x.shape[d] - sizes[d]
            start[d] = min(max(s, 0), x.shape[d] - sizes[d])
        piece = x[tuple(slice(s, s + n) for s, n in zip(start, sizes))].reshape([sizes[d] for d in kept])
        pieces.append(piece if ok or mode == "clip" else np.full_like(piece, fill))
    stacked = np.stack(pieces).reshape(batch + tuple(sizes[d] for d in kept))
    batch_pos = [d for d in range(out_rank) if d not in dn.offset_dims]
    src = {p: i for i, p in enumerate(batch_pos)}
    src.update({p: len(batch) + i for i, p in enumerate(dn.offset_dims)})
    out = np.transpose(stacked, [src[d] for d in range(out_rank)])
    return out


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_with_dimension_numbers(mode):
    x = rng.normal(size=(4, 5, 6))
    dn = lax.GatherDimensionNumbers(offset_dims=(0, 2), collapsed_slice_dims=(1,), start_index_map=(1, 0))
    idx = np.array([[1, 0], [4, 2], [-1, 1], [2, 3]])
    out = lax.gather(x, idx, dn, (2, 1, 3), mode=mode)
    np.testing.assert_array_equal(out, _gather_reference(x, idx, dn, (2, 1, 3), mode))
    staged = fg.jit(lambda x, i: lax.gather(x, i, dn, (2, 1, 3), mode=mode))(x, idx)
    np.testing.assert_array_equal(staged, out)


def test_gather_grad_and_the_row_form():
    x = rng.normal(size=(4, 3))
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    idx = np.array([[2], [0], [2]])
    g = fg.grad(lambda x: lax.gather(x, idx, dn, (1, 3), mode="clip").sum())(x)
    np.testing.assert_array_equal(g, np.array([[1.0] * 3, [0] * 3, [2.0] * 3, [0] * 3]))
    np.testing.assert_array_equal(lax.gather(x, np.array([[1]])), x[[1]])  # funcgrad's row gather
    assert lax.GatherScatterMode.from_any("fill") is lax.GatherScatterMode.FILL_OR_DROP
    with pytest.raises(NotImplementedError, match="batching_dims"):
        lax.gather(x, idx, dn._replace(operand_batching_dims=(1,)), (1, 3))


def test_index_take_wraps_indices():
    x = rng.normal(size=(4, 5, 6))
    i, j = np.array([1, -1, 5]), np.array([0, 2, 7])
    np.testing.assert_array_equal(lax.index_take(x, (i, j), (0, 2)), x[i % 4, :, j % 6])


def test_scatter_apply_applies_once_per_occurrence():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    x = np.arange(12.0).reshape(4, 3)
    out = lax.scatter_apply(x, np.array([[1], [3], [1]]), lambda v: v * 2 + 1, dn, update_shape=(3, 3))
    expected = x.copy()
    for r in (1, 3, 1):
        expected[r] = expected[r] * 2 + 1
    np.testing.assert_array_equal(out, expected)
    unique = lax.scatter_apply(x, np.array([[0]]), np.sqrt, dn, update_shape=(1, 3), unique_indices=True)
    np.testing.assert_allclose(unique, np.vstack([np.sqrt(x[:1]), x[1:]]))


# --- collectives over a named vmap axis -----------------------------------------------------

def _vmapped(f, x):
    return fg.vmap(f, axis_name="i")(x)


def test_ppermute_pshuffle_pbroadcast():
    x = np.arange(4.0) + 10
    np.testing.assert_array_equal(_vmapped(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2)]), x), [0, 10, 11, 0])
    np.testing.assert_array_equal(_vmapped(lambda v: lax.pshuffle(v, "i", [2, 0, 3, 1]), x), x[[2, 0, 3, 1]])
    np.testing.assert_array_equal(_vmapped(lambda v: lax.pbroadcast(v, "i", 2), x), [12.0] * 4)
    with pytest.raises(ValueError, match="distinct"):
        _vmapped(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]), x)
    with pytest.raises(NameError, match="unbound axis name"):
        lax.ppermute(1.0, "j", [(0, 0)])


def test_ppermute_transposes_under_grad():
    x = np.arange(3.0)
    w = np.array([1.0, 10.0, 100.0])
    perm = [(0, 1), (1, 2), (2, 0)]
    g = fg.grad(lambda x: (_vmapped(lambda v: lax.ppermute(v, "i", perm), x) * w).sum())(x)
    np.testing.assert_array_equal(g, [10.0, 100.0, 1.0])  # x[s] lands at d, weighted by w[d]


def test_all_to_all_and_pswapaxes():
    x = rng.normal(size=(4, 4, 3))  # 4 examples, each split along axis 0 in 4
    out = _vmapped(lambda v: lax.all_to_all(v, "i", 0, 1), x)
    np.testing.assert_array_equal(out, np.transpose(x, (1, 2, 0)))  # out[i][:, j] = x[j][i]
    xt = rng.normal(size=(4, 8, 3))
    tiled = _vmapped(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), xt)
    expected = np.stack([np.concatenate([xt[j, 2 * i:2 * i + 2] for j in range(4)], axis=1) for i in range(4)])
    np.testing.assert_array_equal(tiled, expected)
    y = rng.normal(size=(4, 2, 4))
    np.testing.assert_array_equal(_vmapped(lambda v: lax.pswapaxes(v, "i", 1), y), np.transpose(y, (2, 1, 0)))


def test_psum_scatter_and_axis_size():
    x = rng.normal(size=(4, 4, 3))
    np.testing.assert_allclose(_vmapped(lambda v: lax.psum_scatter(v, "i"), x), x.sum(0), rtol=1e-14)
    xt = rng.normal(size=(4, 3, 8))
    out = _vmapped(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True), xt)
    np.testing.assert_allclose(out, np.stack([xt.sum(0)[:, 2 * i:2 * i + 2] for i in range(4)]), rtol=1e-14)
    assert _vmapped(lambda v: v * lax.axis_size("i"), np.ones(5)).tolist() == [5.0] * 5
    np.testing.assert_array_equal(_vmapped(lambda v: lax.pcast(v, "i", to="varying"), x), x)
    np.testing.assert_array_equal(lax.with_sharding_constraint(x, None), x)


# --- elementwise ----------------------------------------------------------------------------

def test_round_methods():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 3.7, -3.2])
    np.testing.assert_array_equal(lax.round(x), [1, 2, 3, -1, -3, 0, 4, -3])
    np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.rint(x))


def test_clz_mulhi_against_python_ints():
    a = rng.integers(-2**62, 2**62, 30)
    b = rng.integers(-2**62, 2**62, 30)
    for dt in (np.int64, np.uint64, np.int32, np.uint32, np.int8, np.uint16):
        x, y = a.astype(dt), b.astype(dt)
        bits = np.dtype(dt).itemsize * 8
        want = [(int(p) * int(q)) >> bits for p, q in zip(x, y)]
        assert [int(v) for v in lax.mulhi(x, y)] == [w if np.dtype(dt).kind == "i" else w % 2**bits for w in want]
        clz = [bits - (int(v) % 2**bits).bit_length() for v in x]
        assert lax.clz(x).tolist() == clz and lax.clz(x).dtype == dt


def test_nextafter_matches_numpy():
    x1 = np.array([0.0, -0.0, 1.0, -1.0, 1.0, np.inf, 5e-324, np.nan, 3.0])
    x2 = np.array([1.0, -1.0, 0.0, -2.0, 1.0, 0.0, 0.0, 1.0, np.inf])
    np.testing.assert_array_equal(lax.nextafter(x1, x2), np.nextafter(x1, x2))
    f = x1.astype(np.float32)
    np.testing.assert_array_equal(lax.nextafter(f, x2.astype(np.float32)), np.nextafter(f, x2.astype(np.float32)))


def test_reduce_precision_rounds_like_float16_in_its_normal_range():
    x = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-4, 4, 200), [65504.0, 1 + 2**-11, 1 + 3 * 2**-11]])
    x = x[np.abs(x) >= 2.0**-14]  # float16's normal range (XLA flushes what is below to zero)
    np.testing.assert_array_equal(lax.reduce_precision(x, 5, 10), x.astype(np.float16).astype(np.float64))
    edge = np.array([1e6, -1e6, 1e-10, -1e-10, np.nan, np.inf])
    out = lax.reduce_precision(edge, 5, 10)
    np.testing.assert_array_equal(out[:5], [np.inf, -np.inf, 0.0, -0.0, np.nan])
    assert np.signbit(out[3]) and out[5] == np.inf
    with pytest.raises(ConcretizationError, match="mantissa_bits"):
        fg.jit(lambda x, m: lax.reduce_precision(x, 5, m))(1.0, 3)


def test_special_functions_match_scipy():
    a, x = np.array([0.5, 2.5, 7.0]), np.array([0.3, 1.7, 9.0])
    np.testing.assert_allclose(lax.igamma(a, x), sp.gammainc(a, x), rtol=1e-12)
    np.testing.assert_allclose(lax.igammac(a, x), sp.gammaincc(a, x), rtol=1e-12)
    eps = 1e-6
    fd = (sp.gammainc(a + eps, x) - sp.gammainc(a - eps, x)) / (2 * eps)
    np.testing.assert_allclose(lax.igamma_grad_a(a, x), fd, rtol=1e-6)
    density = np.exp((a - 1) * np.log(x) - x - sp.gammaln(a))
    np.testing.assert_allclose(lax.random_gamma_grad(a, x), -fd / density, rtol=1e-6)
    np.testing.assert_allclose(lax.zeta(np.array([2.0, 3.5]), np.array([1.0, 2.5])), sp.zeta([2.0, 3.5], [1.0, 2.5]),
                               rtol=1e-12)
    np.testing.assert_allclose(lax.betainc(2.0, 3.0, 0.4), sp.betainc(2.0, 3.0, 0.4), rtol=1e-12)
    np.testing.assert_allclose(lax.bessel_i0e(x), sp.i0e(x), rtol=1e-12)
    np.testing.assert_allclose(lax.bessel_i1e(x), sp.i1e(x), rtol=1e-12)


# --- shapes, products, misc -----------------------------------------------------------------

def test_structural_helpers_match_numpy():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(lax.tile(x, (2, 1, 3)), np.tile(x, (2, 1, 3)))
    for piece, ref in zip(lax.split(x, (1, 3), axis=2), np.split(x, [1], axis=2)):
        np.testing.assert_array_equal(piece, ref)
    np.testing.assert_array_equal(lax.stack([x, x + 1], axis=1), np.stack([x, x + 1], axis=1))
    for piece, ref in zip(lax.unstack(x, axis=1), [x[:, i] for i in range(3)]):
        np.testing.assert_array_equal(piece, ref)
    assert lax.collapse(x, 1).shape == (2, 12) and lax.collapse(x, 0, 2).shape == (6, 4)
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    np.testing.assert_array_equal(lax.shape_as_value((2, 3)), [2, 3])
    assert lax.dtype(1.0) == np.float64 and lax.dtype(np.int32) == np.int32 and lax.dtype(x) == np.float64
    assert lax.empty((2, 3), np.float32).shape == (2, 3)
    np.testing.assert_array_equal(lax.broadcast_like(np.ones((3, 1)), np.zeros((2, 3, 4))), np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="sum to the length"):
        lax.split(x, (1, 1), axis=2)


def test_products():
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
    np.testing.assert_allclose(lax.batch_matmul(a, b), a @ b, rtol=1e-13)
    s = rng.random((2, 3, 2))
    np.testing.assert_allclose(lax.scaled_dot(a, b, lhs_scale=s), (a * np.repeat(s, 2, -1)) @ b, rtol=1e-13)
    lhs, rhs = rng.normal(size=(6, 4)), rng.normal(size=(3, 4, 2))
    sizes = np.array([2, 0, 3], np.int32)
    groups = np.repeat(np.arange(3), sizes)
    expected = np.vstack([lhs[i] @ rhs[g] for i, g in enumerate(groups)] + [np.zeros((1, 2))])
    np.testing.assert_allclose(lax.ragged_dot(lhs, rhs, sizes), expected, rtol=1e-13)
    dn = lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    np.testing.assert_allclose(lax.ragged_dot_general(lhs, rhs, sizes, dn), expected, rtol=1e-13)


def test_approx_top_k_is_exact():
    x = rng.normal(size=(4, 7))
    values, idx = lax.approx_max_k(x, 3, reduction_dimension=1)
    np.testing.assert_array_equal(idx, np.argsort(-x, axis=1)[:, :3])
    np.testing.assert_array_equal(values, -np.sort(-x, axis=1)[:, :3])
    values, idx = lax.approx_min_k(x, 2, reduction_dimension=0)
    np.testing.assert_array_equal(values, np.sort(x, axis=0)[:2])
    ints = np.array([np.iinfo(np.int64).min, 3, -2])
    assert lax.approx_min_k(ints, 1)[0].tolist() == [np.iinfo(np.int64).min]


def test_conv_shape_tuples_match_the_convolutions():
    lhs, rhs = np.ones((2, 10, 12, 3)), np.ones((3, 3, 3, 8))
    specs = ("NHWC", "HWIO", "NHWC")
    out = lax.conv_general_dilated(lhs, rhs, (2, 1), "SAME", dimension_numbers=specs)
    assert lax.conv_general_shape_tuple(lhs.shape, rhs.shape, (2, 1), "SAME", specs) == out.shape
    out_t = lax.conv_transpose(lhs, rhs, (2, 1), "VALID", dimension_numbers=specs)
    assert lax.conv_transpose_shape_tuple(lhs.shape, rhs.shape, (2, 1), "VALID", specs) == out_t.shape
    assert lax.conv_general_permutations(specs) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_shape_tuple((1, 3, 10, 10), (8, 3, 3, 3), (1, 1), "SAME") == (1, 8, 10, 10)
    x = np.ones((10, 7))
    pads = ((1, 1), (0, 2))
    red = lax.reduce_window(x, 0.0, lax.add, (3, 2), (2, 1), pads)
    assert lax.reduce_window_shape_tuple(x.shape, (3, 2), (2, 1), pads) == red.shape


def test_conv_general_dilated_local_against_a_loop():
    lhs = rng.normal(size=(2, 3, 6, 5))
    rhs = rng.normal(size=(5, 4, 3 * 2 * 2, 7))  # output spatial (5, 4), C * prod(filter) inputs, 7 outputs
    out = lax.conv_general_dilated_local(lhs, rhs, (1, 1), "VALID", (2, 2),
                                         dimension_numbers=("NCHW", "HWIO", "NCHW"))
    expected = np.zeros((2, 7, 5, 4))
    for i in range(5):
        for j in range(4):
            patch = lhs[:, :, i:i + 2, j:j + 2].reshape(2, -1)  # (N, C * 2 * 2), channel major
            expected[:, :, i, j] = patch @ rhs[i, j]
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_composite_platform_dependent_and_the_rest():
    gelu = lax.composite(lambda x: x * 0.5 * (1 + lax.erf(x / math.sqrt(2))), "my.gelu", version=2)
    assert gelu.composite_name == "my.gelu" and float(gelu(1.0)) == pytest.approx(0.5 * (1 + math.erf(2 ** -0.5)))
    assert lax.platform_dependent(2.0, cpu=lambda x: x + 1, tpu=lambda x: x) == 3.0
    assert lax.platform_dependent(2.0, default=lambda x: x * 2) == 4.0
    with pytest.raises(NotImplementedError, match="no branch for the 'cpu'"):
        lax.platform_dependent(2.0, tpu=lambda x: x)
    np.testing.assert_array_equal(lax.stage(np.arange(3)), np.arange(3))
    assert lax.dce_sink(np.ones(2)) is None
    lax.dot(np.ones(2), np.ones(2), precision=lax.DotAlgorithmPreset.F64_F64_F64)
    lax.dot(np.ones(2), np.ones(2), precision=lax.DotAlgorithm(np.float64, np.float64, np.float64))


def test_rng_bit_generator_is_a_pure_function_of_the_key():
    key = np.array([1, 2, 3, 4], np.uint32)
    k1, b1 = lax.rng_bit_generator(key, (1000,))
    k2, b2 = fg.jit(lambda k: lax.rng_bit_generator(k, (1000,)))(key)
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_array_equal(k1, k2)
    assert k1.shape == (4,) and b1.dtype == np.uint32 and not np.array_equal(k1, key)
    _, b3 = lax.rng_bit_generator(k1, (1000,))
    assert not np.array_equal(b1, b3)
    # each bit is set about half the time
    ones = np.unpackbits(np.asarray(b1).view(np.uint8)).mean()
    assert abs(ones - 0.5) < 0.01
    _, b64 = lax.rng_bit_generator(key[:2], (3, 2), np.uint64)
    assert b64.shape == (3, 2) and b64.dtype == np.uint64
    with pytest.raises(NotImplementedError, match="PHILOX"):
        lax.rng_bit_generator(key, (2,), algorithm=lax.RandomAlgorithm.RNG_PHILOX)
