"""funcgrad.lax convolutions (conv_general_dilated and its wrappers) against an explicit
NumPy reference written from XLA's definition (dilate, pad, slide a dilated kernel;
StableHLO's split/concatenate for feature and batch groups) and scipy.signal.correlate;
derivatives against finite differences, vmap against a loop, jit against eager, errors."""
import numpy as np
import pytest
from scipy import signal

import funcgrad as fg
from funcgrad import lax
from funcgrad.test_util import check_grads

from harness import assert_same, compiled_and_evaluated

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# --- the reference ------------------------------------------------------------------------
def _dilate_np(x, dil, first_axis):
    """Insert d-1 zeros between elements along the axes from first_axis on."""
    shape = list(x.shape)
    index = [slice(None)] * x.ndim
    for ax, d in enumerate(dil, first_axis):
        shape[ax] = (x.shape[ax] - 1) * d + 1 if x.shape[ax] else 0
        index[ax] = slice(None, None, d)
    out = np.zeros(shape, x.dtype)
    out[tuple(index)] = x
    return out


def _pad_np(x, pads, first_axis):
    """Pad with zeros (negative pads crop)."""
    width = [(0, 0)] * first_axis + [(max(lo, 0), max(hi, 0)) for lo, hi in pads]
    x = np.pad(x, width)
    index = [slice(None)] * first_axis + [slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in
                                          zip(pads, x.shape[first_axis:])]
    return x[tuple(index)]


def ref_conv(lhs, rhs, strides, pads, lhs_dil=None, rhs_dil=None, groups=1, bgroups=1):
    """Canonical layout (N, C, spatial) x (O, I, spatial) -> (N', O, spatial), float64."""
    nsp = lhs.ndim - 2
    lhs_dil, rhs_dil = lhs_dil or (1,) * nsp, rhs_dil or (1,) * nsp
    if groups > 1 or bgroups > 1:
        axis, g = (1, groups) if groups > 1 else (0, bgroups)
        parts = zip(np.split(lhs, g, axis=axis), np.split(rhs, g, axis=0))
        return np.concatenate([ref_conv(x, w, strides, pads, lhs_dil, rhs_dil) for x, w in parts], axis=1)
    x = _pad_np(_dilate_np(lhs.astype(np.float64), lhs_dil, 2), pads, 2)
    w = _dilate_np(rhs.astype(np.float64), rhs_dil, 2)
    eff = w.shape[2:]
    out_shape = [max(0, (p - e) // s + 1) if p >= e else 0 for p, e, s in zip(x.shape[2:], eff, strides)]
    out = np.zeros((lhs.shape[0], rhs.shape[0], *out_shape))
    for pos in np.ndindex(*out_shape):
        window = x[(slice(None), slice(None)) + tuple(slice(p * s, p * s + e) for p, s, e in zip(pos, strides, eff))]
        out[(slice(None), slice(None)) + pos] = np.tensordot(window, w, axes=(list(range(1, nsp + 2)),) * 2)
    return out


def same_pads(sizes, window, strides):
    """TensorFlow's SAME rule, written out: ceil(n / s) outputs, the odd pad at the end."""
    pads = []
    for n, k, s in zip(sizes, window, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total // 2, total - total // 2))
    return pads


# --- values -------------------------------------------------------------------------------
CASES = [  # lhs shape, rhs shape, strides, padding, lhs_dil, rhs_dil, groups, batch groups
    ((2, 3, 9), (4, 3, 3), (1,), "VALID", None, None, 1, 1),
    ((2, 3, 9), (4, 3, 3), (2,), [(2, 1)], None, (2,), 1, 1),
    ((1, 2, 7, 6), (3, 2, 3, 2), (1, 1), "VALID", None, None, 1, 1),
    ((2, 2, 7, 6), (3, 2, 3, 3), (2, 1), [(1, 2), (0, 1)], None, None, 1, 1),
    ((1, 2, 5, 6), (2, 2, 3, 3), (1, 2), [(-1, 2), (1, -1)], (2, 1), (1, 2), 1, 1),
    ((2, 4, 6, 5), (6, 2, 2, 3), (1, 1), [(1, 1), (1, 0)], None, (2, 1), 2, 1),
    ((1, 3, 6, 6), (3, 1, 3, 3), (2, 2), [(1, 1), (1, 1)], None, None, 3, 1),  # depthwise
    ((4, 3, 5, 5), (6, 3, 2, 2), (1, 1), "VALID", None, None, 1, 2),
    ((1, 2, 4, 5, 3), (2, 2, 2, 3, 2), (1, 2, 1), [(1, 0), (1, 1), (0, 1)], (1, 1, 2), (2, 1, 1), 1, 1),
    ((1, 2, 3, 3), (2, 2, 5, 5), (1, 1), "VALID", None, None, 1, 1),  # empty output
]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_values_against_reference(case):
    ls, rs, strides, padding, ld, rd, g, b = case
    x, w = rand(*ls), rand(*rs)
    got = lax.conv_general_dilated(x, w, strides, padding, ld, rd, feature_group_count=g, batch_group_count=b)
    pads = [(0, 0)] * len(strides) if padding == "VALID" else padding
    assert_same(got, ref_conv(x, w, strides, pads, ld, rd, g, b), rtol=1e-12, atol=1e-12)


def test_matches_scipy_correlate():
    x, w = rand(1, 1, 8, 7), rand(1, 1, 3, 3)
    for mode, padding in (("valid", "VALID"), ("same", "SAME"), ("full", [(2, 2), (2, 2)])):
        got = lax.conv(x, w, (1, 1), padding) if padding != "full" else \
            lax.conv_with_general_padding(x, w, (1, 1), padding, None, None)
        np.testing.assert_allclose(got[0, 0], signal.correlate(x[0, 0], w[0, 0], mode=mode), atol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "SAME_LOWER"])
def test_same_padding(padding):
    x, w = rand(1, 2, 7, 8), rand(3, 2, 4, 3)
    got = lax.conv_general_dilated(x, w, (2, 3), padding, rhs_dilation=(1, 2))
    pads = same_pads((7, 8), (4, 5), (2, 3))
    if padding == "SAME_LOWER":
        pads = [(hi, lo) for lo, hi in pads]
    assert got.shape == (1, 3, 4, 3)
    assert_same(got, ref_conv(x, w, (2, 3), pads, rhs_dil=(1, 2)), rtol=1e-12, atol=1e-12)
    assert lax.padtype_to_pads((7, 8), (4, 5), (2, 3), padding) == pads


@pytest.mark.parametrize("specs", [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NHWC"), ("WNCH", "IWHO", "CHNW")])
def test_dimension_numbers(specs):
    # the logical spatial order is the kernel spec's (JAX's rule): strides follow it
    sp = "".join(ch for ch in specs[1] if ch in "HW")
    lhs_names, rhs_names = "NC" + sp, "OI" + sp
    xc, wc = rand(2, 3, 5, 6), rand(4, 3, 3, 2)  # canonical (N, C, sp...) / (O, I, sp...)
    x = np.transpose(xc, [lhs_names.index(ch) for ch in specs[0]])
    w = np.transpose(wc, [rhs_names.index(ch) for ch in specs[1]])
    got = lax.conv_general_dilated(x, w, (1, 2), "SAME", dimension_numbers=specs)
    want = ref_conv(xc, wc, (1, 2), same_pads((5, 6), (3, 2), (1, 2)))
    assert_same(got, np.transpose(want, [lhs_names.index(ch) for ch in specs[2]]), rtol=1e-12, atol=1e-12)
    dn = lax.conv_dimension_numbers(x.shape, w.shape, specs)
    assert isinstance(dn, lax.ConvDimensionNumbers)
    assert_same(lax.conv_general_dilated(x, w, (1, 2), "SAME", dimension_numbers=dn), got)


def test_conv_dimension_numbers_like_jax():
    dn = lax.conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == ((0, 1, 2),) * 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_dtypes_preserved_and_jit_matches_eager(dtype):
    x, w = (rand(2, 5, 5, 4) * 3).astype(dtype), (rand(3, 3, 2, 6) * 3).astype(dtype)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 2), "SAME", rhs_dilation=(1, 2),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2)

    eager = f(x, w)
    assert eager.dtype == dtype
    assert_same(fg.jit(f)(x, w), eager, rtol=1e-5 if dtype == np.float32 else 1e-12)
    compiled, evaluated = compiled_and_evaluated(f, x, w)  # native code, no fallback
    assert_same(compiled[0], eager, rtol=1e-5 if dtype == np.float32 else 1e-12, check_type=False)


def test_preferred_element_type():
    x, w = np.arange(18.0, dtype=np.float32).reshape(1, 2, 9), np.ones((1, 2, 2), np.float32)
    got = lax.conv(x, w, (1,), "VALID", preferred_element_type=np.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref_conv(x, w, (1,), [(0, 0)]))


# --- derivatives, vmap, conv_transpose ----------------------------------------------------
@pytest.mark.parametrize("case", [CASES[1], CASES[4], CASES[5], CASES[7]], ids=["1d", "dilated", "groups", "bgroups"])
def test_gradients_both_operands(case):
    ls, rs, strides, padding, ld, rd, g, b = case

    def f(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, ld, rd, feature_group_count=g, batch_group_count=b)

    check_grads(f, (rand(*ls), rand(*rs)), order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


def test_second_order_and_jit_of_grad():
    x, w = rand(1, 2, 5, 4), rand(2, 2, 2, 2)

    def loss(x, w):
        y = lax.conv_general_dilated(x, w, (2, 1), "SAME")
        return (y * y).sum()

    check_grads(loss, (x, w), order=2, modes=("rev",), atol=1e-5, rtol=1e-5)
    gx, gw = fg.grad(loss, argnums=(0, 1))(x, w)
    jx, jw = fg.jit(fg.grad(loss, argnums=(0, 1)))(x, w)
    assert_same(jx, gx, rtol=1e-12)
    assert_same(jw, gw, rtol=1e-12)


def test_vmap_matches_loop():
    xs, ws = rand(3, 2, 2, 5, 5), rand(3, 4, 2, 3, 3)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), [(1, 0), (0, 1)], rhs_dilation=(1, 2))

    loop = np.stack([f(x, w) for x, w in zip(xs, ws)])
    assert_same(fg.vmap(f)(xs, ws), loop, rtol=1e-12)
    assert_same(fg.vmap(f, in_axes=(0, None))(xs, ws[0]), np.stack([f(x, ws[0]) for x in xs]), rtol=1e-12)
    wt = rand(4, 2, 2, 3, 3)  # mapped over its axis 2
    assert_same(fg.vmap(f, in_axes=(None, 2))(xs[0], wt), np.stack([f(xs[0], wt[:, :, i]) for i in range(2)]),
                rtol=1e-12)


@pytest.mark.parametrize("strides,padding,size", [((2, 2), "SAME", 8), ((2, 1), "VALID", 9), ((1, 1), "SAME", 5)])
def test_conv_transpose_is_the_input_gradient(strides, padding, size):
    x, w = rand(2, size, size, 3), rand(3, 3, 3, 4)  # NHWC, HWIO
    dn = ("NHWC", "HWIO", "NHWC")
    y, pullback = fg.vjp(lambda x: lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=dn), x)
    ct = rand(*y.shape)
    got = lax.conv_transpose(ct, w, strides, padding, dimension_numbers=dn, transpose_kernel=True)
    assert_same(got, pullback(ct)[0], rtol=1e-12, atol=1e-12)


def test_conv_transpose_upsamples():
    x, w = rand(1, 4, 5, 2), rand(3, 3, 2, 3)  # default NHWC / HWIO
    y = lax.conv_transpose(x, w, (2, 2), "SAME")
    assert y.shape == (1, 8, 10, 3)
    # stride-2 transposed conv = conv of the 2x-dilated input (JAX's definition)
    want = lax.conv_general_dilated(x, w, (1, 1), [(2, 1), (2, 1)], lhs_dilation=(2, 2),
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
    assert_same(y, want)
    xc, wc = np.transpose(x, (0, 3, 1, 2)), np.transpose(w, (3, 2, 0, 1))
    ref = ref_conv(xc, wc, (1, 1), [(2, 1), (2, 1)], lhs_dil=(2, 2))
    assert_same(y, np.transpose(ref, (0, 2, 3, 1)), rtol=1e-12, atol=1e-12)


def test_patches_times_kernel_is_the_convolution():
    x, w = rand(2, 3, 6, 5), rand(4, 3, 2, 3)
    p = lax.conv_general_dilated_patches(x, (2, 3), (1, 2), "SAME", rhs_dilation=(2, 1))
    assert p.shape[1] == 3 * 6
    got = np.einsum("nkhw,ok->nohw", p, w.reshape(4, -1))
    want = lax.conv_general_dilated(x, w, (1, 2), "SAME", rhs_dilation=(2, 1))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# --- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,exc,words", [
    (dict(rhs=np.ones((4, 5, 3, 3))), ValueError, ["conv_general_dilated", "lhs feature dimension (6)", "f64[4,5,3,3]"]),
    (dict(feature_group_count=4), ValueError, ["conv_general_dilated", "feature_group_count (4)", "f64[2,6,8,8]"]),
    (dict(rhs=np.ones((4, 3, 3, 3)), feature_group_count=2, batch_group_count=2), ValueError,
     ["conv_general_dilated", "at most one"]),
    (dict(rhs=np.ones((3, 6, 3, 3)), batch_group_count=2), ValueError, ["output feature dimension (3)", "batch_group"]),
    (dict(dimension_numbers=("NHWC", "HWIX", "NHWC")), TypeError, ["conv_general_dilated", "'O' and 'I'", "HWIX"]),
    (dict(dimension_numbers=("NHWC", "HWIO")), TypeError, ["conv_general_dilated", "dimension_numbers"]),
    (dict(dimension_numbers=("NHW", "HWIO", "NHWC")), TypeError, ["conv_general_dilated", "rank 4"]),
    (dict(window_strides=(1,)), ValueError, ["conv_general_dilated", "window_strides", "f64[2,6,8,8]"]),
    (dict(padding=[(1, 1)]), ValueError, ["conv_general_dilated", "padding", "f64[2,6,8,8]"]),
    (dict(padding="FULL"), ValueError, ["padding", "'FULL'"]),
    (dict(padding=[(-5, -5), (0, 0)]), ValueError, ["conv_general_dilated", "crops"]),
    (dict(rhs=np.ones((4, 6, 3))), TypeError, ["conv_general_dilated", "same rank", "(4, 6, 3)"]),
    (dict(rhs=np.ones((4, 6, 3, 3), np.float32)), TypeError, ["conv_general_dilated", "dtype", "f32[4,6,3,3]"]),
])
def test_bad_input_raises_clear_errors(kwargs, exc, words):
    args = dict(lhs=np.ones((2, 6, 8, 8)), rhs=np.ones((4, 6, 3, 3)), window_strides=(1, 1), padding="VALID")
    args.update(kwargs)
    with pytest.raises(exc) as info:
        lax.conv_general_dilated(**args)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_errors_under_jit_too():
    f = fg.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID"))
    with pytest.raises(ValueError, match="conv_general_dilated.*lhs feature dimension"):
        f(np.ones((1, 2, 4, 4)), np.ones((1, 3, 2, 2)))
