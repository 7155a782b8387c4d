"""Adversarial review of complex numbers, the FFT and complex linear algebra (issue #16).

Each test guards a contract (JAX's derivative conventions, jit == eager in values and
dtypes, vmap == loop, typed errors) or is the regression test of a bug this review found
(named in its docstring).
"""
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.scipy.signal  # noqa: F401  (fg.scipy.signal)


def _same(got, want, tol=1e-9):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


def _fd_grad(f, z, eps=1e-6):
    """JAX's grad of a real f at complex z by central differences: df/dx - i df/dy."""
    z = np.asarray(z, np.complex128)
    g = np.zeros_like(z)
    for i in range(z.size):
        e = np.zeros_like(z)
        e.flat[i] = eps
        dx = (float(f(z + e)) - float(f(z - e))) / (2 * eps)
        dy = (float(f(z + 1j * e)) - float(f(z - 1j * e))) / (2 * eps)
        g.flat[i] = dx - 1j * dy
    return g


# --- bug: complex -> bool cast under tracing kept only the real part ----------------------
def test_astype_bool_of_complex_is_nonzero_traced_as_eager():
    """Bug: ``x.astype(bool)`` of complex was NumPy's "nonzero" eagerly but "real part
    nonzero" under jit/vmap (lax's cast), so -3j became False; it also warned
    ComplexWarning, which NumPy does not."""
    x = np.array([1 + 2j, -3j, 0.5, complex(0, np.nan), 0j])
    want = x.astype(bool)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(fg.jit(lambda v: v.astype(bool))(x), want)
        _same(fg.vmap(lambda v: fnp.asarray(v, dtype=bool))(x), want)
        _same(fg.jit(lambda v: v.astype(np.bool_))(x.astype(np.complex64)), want)
        _same(fnp.asarray(x).astype(bool), want)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops_on_complex_use_nonzero(name):
    """Bug: logical_and/or/xor/not and ``where``'s condition turned complex into bool by
    lax's cast, which reads only the real part: ``logical_and(0.5j, 0.5j)`` was False."""
    c = np.array([1 + 2j, 3 - 1j, 0.5j, 2, 0j, complex(0, np.nan)])
    want = getattr(np, name)(c, c[::-1])
    _same(getattr(fnp, name)(c, c[::-1]), want)
    _same(fg.jit(getattr(fnp, name))(c, c[::-1]), want)


def test_logical_not_and_where_condition_on_complex():
    c = np.array([0.5j, 0j, -1 + 0j, complex(0, np.nan)])
    _same(fnp.logical_not(c), np.logical_not(c))
    _same(fg.jit(fnp.logical_not)(c), np.logical_not(c))
    _same(fg.jit(lambda v: fnp.where(v, 1.0, 2.0))(c), np.where(c, 1.0, 2.0))
    _same(fg.vmap(lambda v: fnp.where(v, 1.0, 2.0))(c), np.where(c, 1.0, 2.0))


_NO_COMPLEX_LOOP = {
    "floor": lambda x: fnp.floor(x), "ceil": lambda x: fnp.ceil(x), "trunc": lambda x: fnp.trunc(x),
    "fix": lambda x: fnp.fix(x), "hypot": lambda x: fnp.hypot(x, x), "heaviside": lambda x: fnp.heaviside(x, x),
    "deg2rad": lambda x: fnp.deg2rad(x), "rad2deg": lambda x: fnp.rad2deg(x), "fabs": lambda x: fnp.fabs(x),
    "signbit": lambda x: fnp.signbit(x), "frexp": lambda x: fnp.frexp(x), "ldexp": lambda x: fnp.ldexp(x, 2),
    "nextafter": lambda x: fnp.nextafter(x, x), "spacing": lambda x: fnp.spacing(x),
    "isposinf": lambda x: fnp.isposinf(x), "isneginf": lambda x: fnp.isneginf(x),
    "arctan2": lambda x: fnp.arctan2(x, x), "copysign": lambda x: fnp.copysign(x, x),
    "logaddexp": lambda x: fnp.logaddexp(x, x), "cbrt": lambda x: fnp.cbrt(x),
}


@pytest.mark.parametrize("name", sorted(_NO_COMPLEX_LOOP))
def test_functions_numpy_rejects_for_complex_raise_typeerror(name):
    """Bug: floor/ceil/trunc/fix returned complex input unchanged, hypot/fabs gave |z|,
    heaviside/signbit/deg2rad/isposinf read the real part, frexp/ldexp/nextafter/spacing
    raised an internal KeyError; NumPy raises TypeError for all of them (no complex loop)."""
    c = np.array([1 + 2j, 3 - 1j, 0.5j])
    assert pytest.raises(TypeError, getattr(np, name) if name != "fix" else np.trunc, *([c] * (
        2 if name in ("hypot", "heaviside", "nextafter", "arctan2", "copysign", "logaddexp") else 1)))
    for run in (_NO_COMPLEX_LOOP[name], fg.jit(_NO_COMPLEX_LOOP[name])):
        with pytest.raises(TypeError, match=name if name != "fix" else "trunc"):
            run(c)


def test_rint_of_complex_rounds_both_parts_traced():
    """Bug: ``rint`` of complex worked eagerly but raised "round: operand must be
    floating-point" under jit/vmap/grad (lax.round is real-only)."""
    c = np.array([1.5 + 2.5j, 3 - 1j, 0.5j, -2.5 - 0.5j])
    _same(fg.jit(fnp.rint)(c), np.rint(c))
    _same(fg.vmap(fnp.rint)(c.astype(np.complex64)), np.rint(c.astype(np.complex64)))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_fft_negative_n_raises_as_numpy(name):
    """Bug: ``fft(x, n=-1)`` silently transformed the whole axis (fftn's ``s[i] = -1``
    meaning leaked into the 1-d ``n``); NumPy raises ValueError for any n < 1."""
    x = np.arange(4.0) + (0 if name in ("rfft", "ihfft") else 1j)
    with pytest.raises(ValueError):
        getattr(np.fft, name)(x, n=-1)
    for run in (getattr(fnp.fft, name), fg.jit(getattr(fnp.fft, name), static_argnames="n")):
        with pytest.raises(ValueError, match=f"{name}: invalid number of FFT data points"):
            run(x, n=-1)
    with pytest.raises(TypeError, match=f"{name}: n must be an integer"):
        getattr(fnp.fft, name)(x, n=2.5)


def test_float_power_keeps_complex():
    """Bug: ``float_power`` cast complex input to float64, dropping the imaginary part
    (NumPy computes in complex128)."""
    a = np.array([1 + 1j, 2, 3j], np.complex64)
    _same(fnp.float_power(a, 1.5), np.float_power(a, 1.5))
    _same(fg.jit(fnp.float_power)(a, 2), np.float_power(a, 2))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_correlate_conjugates_v(mode):
    """Bug: complex ``correlate`` did not conjugate ``v`` (NumPy and JAX:
    c[k] = sum_n a[n + k] conj(v[n]))."""
    a, v = np.array([1 + 1j, 2, 3j]), np.array([1j, 2, 1 + 1j, 3])
    for x, y in ((a, v), (v, a), (a.real, a)):
        _same(fnp.correlate(x, y, mode), np.correlate(x, y, mode))
        _same(fg.jit(lambda p, q: fnp.correlate(p, q, mode))(x, y), np.correlate(x, y, mode))


_NANC = np.array([complex(np.nan, 1), 1 + 2j, complex(1, np.nan), -1 + 0.5j, 2 - 1j])


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
                                  "nanargmax", "nanargmin", "nancumsum", "nancumprod"])
def test_nan_functions_skip_complex_nans(name):
    """Bug: the nan-functions treated complex input as NaN-free (only float was masked),
    so ``nansum`` of complex with a NaN part was nan; nanvar squared without conjugating."""
    want = getattr(np, name)(_NANC)
    _same(getattr(fnp, name)(_NANC), want, 1e-12)
    _same(fg.jit(getattr(fnp, name))(_NANC), want, 1e-12)


def test_fmax_fmin_nan_to_num_on_complex():
    """Bug: fmax/fmin propagated complex NaNs (they ignored only float NaNs) and
    nan_to_num returned complex input unchanged (NumPy replaces in each part)."""
    x = np.array([complex(np.nan, 1), 1 + np.inf * 1j, -np.inf + 0j, 0j, complex(np.inf, np.nan)])
    y = x[::-1].copy()
    for name in ("fmax", "fmin"):
        _same(getattr(fnp, name)(x, y), getattr(np, name)(x, y))
        _same(fg.jit(getattr(fnp, name))(x, y), getattr(np, name)(x, y))
    _same(fnp.nan_to_num(x), np.nan_to_num(x))
    _same(fg.jit(lambda v: fnp.nan_to_num(v, nan=1.0, posinf=2.0))(x), np.nan_to_num(x, nan=1.0, posinf=2.0))


@pytest.mark.parametrize("call", [lambda x: fnp.i0(x), lambda x: fnp.percentile(x, 50),
                                  lambda x: fnp.quantile(x, 0.5), lambda x: fnp.nanpercentile(x, 50)])
def test_real_only_statistics_reject_complex(call):
    """Bug: ``i0`` cast complex to float64 silently; ``percentile``/``quantile`` gave a
    complex interpolation where NumPy raises TypeError (a must be real)."""
    with pytest.raises(TypeError, match="real|complex"):
        call(np.array([1 + 1j, 2, 3j]))


def test_polynomial_functions_keep_complex_coefficients():
    """Bug: the polynomial module's ``_inexact`` cast complex input to float64, so
    ``roots``/``poly``/``polyfit``/``polydiv`` of complex coefficients silently dropped the
    imaginary parts (the traced ``roots`` found the roots of the real part); ``polyint``
    dropped complex ``k``; ``polyfit`` on complex data transposed without conjugating."""
    p = np.array([1, 0.3 + 0.2j, -1 + 0.5j, 0.7 - 0.1j])
    _same(fnp.roots(p), np.roots(p), 1e-10)
    _same(np.sort_complex(np.asarray(fg.jit(lambda q: fnp.roots(q, strip_zeros=False))(p))),
          np.sort_complex(np.roots(p)), 1e-10)
    _same(fnp.poly(p[1:]), np.poly(p[1:]), 1e-12)
    _same(fnp.polydiv(p, p[:2])[0], np.polydiv(p, p[:2])[0], 1e-12)
    _same(fnp.polyint(np.arange(3.0), 2, [1j, 2]), np.polyint(np.arange(3.0), 2, [1j, 2]))
    x, y = np.arange(5.0), np.array([1 + 1j, 2, 3j, 1, -1j])
    for a, b in ((x, y), (y, x), (y, y)):
        _same(fnp.polyfit(a, b, 2), np.polyfit(a, b, 2), 1e-10)
        _same(fnp.polyfit(a, b, 2, full=True)[1], np.polyfit(a, b, 2, full=True)[1], 1e-10)


def test_traced_roots_holomorphic_jacobian_matches_finite_differences():
    z = np.array([0.3 + 0.2j, -1 + 0.5j, 0.7 - 0.1j])

    def f(c):
        return fnp.sort_complex(fnp.roots(fnp.concatenate([fnp.ones(1, complex), c]), strip_zeros=False))

    eps = 1e-6
    want = np.stack([(np.asarray(f(z + eps * e)) - np.asarray(f(z - eps * e))) / (2 * eps) for e in np.eye(3)], -1)
    np.testing.assert_allclose(fg.jacfwd(f, holomorphic=True)(z), want, atol=1e-6)
    np.testing.assert_allclose(fg.jacrev(f, holomorphic=True)(z), want, atol=1e-6)


def test_expm_and_sqrtm_take_complex_matrices():
    """Bug: ``scipy.linalg.expm`` of a complex matrix raised an internal KeyError (its
    Padé bounds were keyed by float dtypes only) and ``sqrtm`` a while_loop carry
    TypeError (its convergence measure started complex); SciPy takes complex input."""
    scipy_linalg = pytest.importorskip("scipy.linalg")
    import funcgrad.scipy.linalg as fsl

    a = np.array([[1 + 1j, 2], [0.5j, -1]])
    for m in (a, a.astype(np.complex64), 5 * a):
        tol = 1e-5 if m.dtype == np.complex64 else 1e-10
        _same(fsl.expm(m), scipy_linalg.expm(m), tol)
        _same(fg.jit(fsl.sqrtm)(m), scipy_linalg.sqrtm(m).astype(m.dtype), 1e-4 if tol > 1e-6 else 1e-8)

    def loss(m):
        return fnp.sum(fnp.abs(fsl.expm(m)) ** 2)

    np.testing.assert_allclose(fg.grad(loss)(a), _fd_grad(lambda v: loss(v.reshape(2, 2)), a.ravel()).reshape(2, 2),
                               atol=1e-5)


# --- contracts the review probed (passed; kept compact as guards) ---------------------------
_Z = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j])
_LOSSES = {
    "jax_abs2": lambda x: fnp.sum(fnp.abs(x) ** 2),
    "fft_weighted": lambda x: fnp.sum(fnp.abs(fnp.fft.fft(x)) ** 2 * fnp.arange(3)),
    "ifft_ortho_pad": lambda x: fnp.sum(fnp.real(fnp.fft.ifft(x, n=5, norm="ortho") * fnp.arange(5) * 1j)),
    "fft_crop_forward": lambda x: fnp.sum(fnp.real(fnp.fft.fft(x, n=2, norm="forward") ** 2)),
    "hfft_n5": lambda x: fnp.sum(fnp.fft.hfft(x, n=5) ** 2 * fnp.arange(5)),
    "irfft_ortho": lambda x: fnp.sum(fnp.fft.irfft(x, n=5, norm="ortho") ** 3),
    "ihfft_of_real": lambda x: fnp.sum(fnp.abs(fnp.fft.ihfft(fnp.real(x) * fnp.imag(x))) ** 2 * fnp.arange(2)),
    "fftshift_fft2": lambda x: fnp.sum(fnp.abs(fnp.fft.fftshift(fnp.fft.fft2(fnp.outer(x, x)))) * fnp.arange(3)),
    "fftconvolve_same": lambda x: fnp.sum(fnp.abs(fg.scipy.signal.fftconvolve(x, fnp.array([1, 2j]), mode="same")) ** 2),
    "where_sort_max": lambda x: fnp.abs(fnp.max(fnp.where(fnp.real(x) > 0, x * x, fnp.conj(x)))) + fnp.real(fnp.sort(x)[0]),
    "var_vdot_prod": lambda x: fnp.var(x) + fnp.real(fnp.vdot(x, x * 2j)) + fnp.imag(fnp.prod(x)),
    "scan_carry": lambda x: fnp.abs(fg.lax.scan(lambda c, v: (c * v + 1j, None), 1 + 0j, x)[0]),
    "cond_while": lambda x: fnp.abs(fg.lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * x[0] + 1j, c[1] + 1),
                                                     (fg.lax.cond(fnp.real(x[1]) < 0, fnp.conj, lambda v: v, x[2]), 0))[0]),
    "eigvals": lambda x: fnp.sum(fnp.abs(fnp.linalg.eigvals(fnp.outer(x, x[::-1]) + fnp.diag(x))) ** 2),
}


@pytest.mark.parametrize("name", sorted(_LOSSES))
def test_grad_of_real_loss_is_jax_conjugate_wirtinger(name):
    """grad of a real f(z) is df/dx - i df/dy (JAX's), eager and jit alike."""
    f = _LOSSES[name]
    g = fg.grad(f)(_Z)
    np.testing.assert_allclose(g, _fd_grad(f, _Z), rtol=1e-6, atol=1e-6)
    _same(fg.jit(fg.grad(f))(_Z), np.asarray(g), 1e-9)


def test_jax_convention_examples():
    np.testing.assert_allclose(fg.grad(lambda z: fnp.abs(z) ** 2)(3 + 4j), 6 - 8j, rtol=1e-15)  # (to 1 ulp)
    assert complex(fg.grad(lambda z: z ** 2, holomorphic=True)(1j)) == 2j
    # vjp is the plain (unconjugated) transpose: pullback of z -> c z is ct -> c ct
    (ct,) = fg.vjp(lambda z: (2 + 3j) * z, 1j)[1](1 + 1j)
    assert complex(ct) == (2 + 3j) * (1 + 1j)
    with pytest.raises(TypeError, match="holomorphic"):
        fg.grad(lambda z: z * z)(1j)


@pytest.mark.parametrize("name", ["fft", "ifft_n6", "irfft_n7", "fft2", "cumprod", "solve", "scan"])
def test_holomorphic_jacobians_jvp_vjp_match_finite_differences(name):
    z = np.array([0.3 + 0.2j, -1 + 0.5j, 0.7 - 0.1j, 0.2 + 1j])
    f = {
        "fft": lambda x: fnp.fft.fft(x),
        "ifft_n6": lambda x: fnp.fft.ifft(x, n=6, norm="forward"),
        "irfft_n7": lambda x: fnp.fft.irfft(x, n=7) + 0j,
        "fft2": lambda x: fnp.fft.fft2(x.reshape(2, 2)).ravel(),
        "cumprod": lambda x: fnp.cumprod(x),
        "solve": lambda x: fnp.linalg.solve(fnp.outer(x, x[::-1]) + 3 * fnp.eye(4), x),
        "scan": lambda x: fg.lax.scan(lambda c, v: (c * v + 1j, c), 1 + 0j, x)[1],
    }[name]
    eps = 1e-6
    jac = np.stack([(np.asarray(f(z + eps * e)) - np.asarray(f(z - eps * e))) / (2 * eps) for e in np.eye(4)], -1)
    if name == "irfft_n7":  # not holomorphic: only jvp/vjp, in the real and imaginary directions
        t = np.array([1, 1j, -2j, 0.5])
        jac_im = np.stack([(np.asarray(f(z + 1j * eps * e)) - np.asarray(f(z - 1j * eps * e))) / (2 * eps)
                           for e in np.eye(4)], -1)
        np.testing.assert_allclose(fg.jvp(f, (z,), (t,))[1], jac @ t.real + jac_im @ t.imag, atol=1e-6)
        return
    np.testing.assert_allclose(fg.jacfwd(f, holomorphic=True)(z), jac, atol=1e-6)
    np.testing.assert_allclose(fg.jit(fg.jacrev(f, holomorphic=True))(z), jac, atol=1e-6)
    t = 1j * np.arange(1.0, 5.0)
    np.testing.assert_allclose(fg.jvp(f, (z,), (t,))[1], jac @ t, atol=1e-6)
    ct = np.arange(jac.shape[0]) + 1j
    np.testing.assert_allclose(fg.vjp(f, z)[1](ct)[0], jac.T @ ct, atol=1e-6)


_F32, _I32 = np.array([1.5, -2.0, 0.0], np.float32), np.array([1, -2, 3], np.int32)
_C64 = np.array([1 + 2j, -3j, 0.5], np.complex64)
_JIT_CASES = {
    "f32*1j": (lambda x: x * 1j, _F32), "i32+1j": (lambda x: x + 1j, _I32),
    "i32*c64": (lambda x: x * np.complex64(2j), _I32), "c64+f64": (lambda x: x + fnp.ones(3), _C64),
    "abs_angle": (lambda x: fnp.abs(x) + fnp.angle(x), _C64), "lt_eq": (lambda x: (x < x[::-1], x == x), _C64),
    "sum_keepdims": (lambda x: fnp.sum(fnp.outer(x, x), axis=0, keepdims=True), _C64),
    "std_axis": (lambda x: fnp.std(fnp.outer(x, x), axis=1), _C64), "empty_prod": (lambda x: fnp.prod(x[:0]), _C64),
    "fft_f32": (lambda x: fnp.fft.fft(x), _F32), "fft_i32": (lambda x: fnp.fft.fft(x, n=1), _I32),
    "irfft_c64": (lambda x: fnp.fft.irfft(x), _C64), "rfft_len1": (lambda x: fnp.fft.rfft(x[:1]), _F32),
    "fft_empty_batch": (lambda x: fnp.fft.fft(fnp.zeros((0, 4), x.dtype)), _C64),
    "fft_transposed": (lambda x: fnp.fft.fft(fnp.outer(x, fnp.arange(5.0)).T, axis=0), _C64),
    "irfftn_s": (lambda x: fnp.fft.irfftn(fnp.outer(x, x), s=(2, 6)), _C64),
    "eigvals_real": (lambda x: fnp.linalg.eigvals(fnp.outer(x, x) + fnp.diag(x)), _F32),
    "astype_int": (lambda x: fnp.real(x).astype(np.int32), _C64),
}


@pytest.mark.parametrize("name", sorted(_JIT_CASES))
def test_jit_matches_eager_values_and_dtypes(name):
    f, x = _JIT_CASES[name]
    want = f(fnp.asarray(x))
    got = fg.jit(f)(x)
    for g, w in zip(fg.tree_util.tree_leaves(got), fg.tree_util.tree_leaves(want)):
        _same(g, np.asarray(w), 1e-5)


@pytest.mark.parametrize("in_axes,out_axes", [(0, 0), (1, 0), (1, -1)])
def test_vmap_of_fft_family_matches_loop(in_axes, out_axes):
    z = np.arange(15.0).reshape(3, 5) * (1 - 0.5j) + 1j
    x = z if in_axes == 0 else z.T.copy()

    def f(v):
        return fnp.fft.irfft(fnp.fft.fft(v, n=8, norm="ortho"), n=7) + fnp.real(
            fg.scipy.signal.fftconvolve(v, v[:2], mode="same"))[:1]

    want = np.stack([np.asarray(f(fnp.asarray(v))) for v in np.moveaxis(x, in_axes, 0)], axis=out_axes)
    _same(fg.vmap(f, in_axes=in_axes, out_axes=out_axes)(x), want, 1e-10)
    _same(fg.jit(fg.vmap(fg.jit(f), in_axes=in_axes, out_axes=out_axes))(x), want, 1e-10)


@pytest.mark.parametrize("call,err,msg", [
    (lambda x: fnp.fft.fft(x, n=0), ValueError, r"fft: invalid number of FFT data points \(0\)"),
    (lambda x: fnp.fft.fft(x, axis=1), ValueError, "fft"),
    (lambda x: fnp.fft.fft(x, norm="orto"), ValueError, "fft: invalid norm value 'orto'"),
    (lambda x: fnp.fft.rfft(x), TypeError, "rfft: the input must be real"),
    (lambda x: fnp.fft.fftn(x, s=(2, 3), axes=(0,)), ValueError, "fftn: shape s"),
    (lambda x: fnp.fft.fftn(x.reshape(2, 2), axes=(0, 0)), ValueError, "fftn: repeated axes"),
    (lambda x: fnp.linalg.eig(x.reshape(1, 4)), ValueError, r"eig.*\(1, 4\)"),
])
def test_bad_fft_and_eig_input_raises_typed_errors(call, err, msg):
    x = np.array([1 + 2j, 3 - 1j, 0.5j, 2])
    for run in (call, fg.jit(call)):
        with pytest.raises(err, match=msg):
            run(x)


def test_results_do_not_change_when_inputs_are_mutated():
    a = np.array([1 + 2j, 3 - 1j, 0.5j, 2])
    outs = [fg.jit(fnp.fft.fft)(a), fnp.fft.fft(a), fnp.real(a), fnp.imag(a), fg.jit(fnp.conj)(a)]
    before = [np.array(o) for o in outs]
    a[:] = 99
    for o, b in zip(outs, before):
        _same(o, b)
        assert not np.asarray(o).flags.writeable


def test_export_round_trip_of_fft_program_with_vjp():
    x = np.array([1 + 2j, 3 - 1j, 0.5j, 2, -1j])
    f = fg.jit(lambda v: fnp.abs(fnp.fft.ifft(v * 1j, n=8)) + fnp.real(fnp.fft.fft(v, n=8)))
    g = fg.deserialize(fg.export(f)(x).serialize(vjp_order=1))
    _same(g.call(x), np.asarray(f(x)))
    _same(fg.grad(lambda v: fnp.sum(g.call(v) * fnp.arange(8)))(x),
          np.asarray(fg.grad(lambda v: fnp.sum(f(v) * fnp.arange(8)))(x)), 1e-12)


def test_linalg_extras_keep_complex():
    """Bug: ``pinv``, ``lstsq``, ``cond``, ``svdvals``, ``matrix_rank`` cast complex
    matrices to float64 (dropping the imaginary part: pinv returned a real matrix);
    ``vecdot`` did not conjugate x1 (NumPy and JAX do)."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=(2, 4, 3)) + 1j * rng.normal(size=(2, 4, 3))
    b = rng.normal(size=(4,)) + 1j * rng.normal(size=(4,))
    _same(fnp.linalg.pinv(a), np.linalg.pinv(a), 1e-10)
    _same(fg.jit(fnp.linalg.pinv)(a), np.linalg.pinv(a), 1e-10)
    h = a[0].conj().T @ a[0]
    _same(fnp.linalg.pinv(h, hermitian=True), np.linalg.pinv(h, hermitian=True), 1e-10)
    _same(fnp.linalg.cond(a), np.linalg.cond(a), 1e-10)
    _same(fnp.linalg.cond(a[:, :3], 1), np.linalg.cond(a[:, :3], 1), 1e-10)
    _same(fnp.linalg.svdvals(a), np.linalg.svdvals(a), 1e-10)
    for got, want in zip(fnp.linalg.lstsq(a[0], b), np.linalg.lstsq(a[0], b)):
        _same(got, want, 1e-10)
    _same(fnp.vecdot(a, a[::-1]), np.vecdot(a, a[::-1]), 1e-12)
    _same(fg.jit(fnp.linalg.vecdot)(a, a), np.linalg.vecdot(a, a), 1e-12)

    def loss(m):
        return fnp.sum(fnp.abs(fnp.linalg.pinv(m.reshape(4, 3))) ** 2 * fnp.arange(12.0).reshape(3, 4))

    np.testing.assert_allclose(fg.grad(loss)(a[0].ravel()), _fd_grad(loss, a[0].ravel()), atol=1e-5)


def test_interp_and_linear_ramp_pad_keep_complex():
    """Bug: ``interp`` cast complex ``fp`` to float64 and ``pad(mode="linear_ramp")``
    computed complex ramps in float64, dropping the imaginary parts (NumPy keeps them)."""
    c = np.array([1 + 2j, 3 - 1j, 0.5j, 2, -1j])
    xs = np.array([-1, 0.5, 1.5, 4, 7.0])
    for kw in ({}, {"left": 1j, "right": 2}, {"period": 3.0}):
        want = np.interp(xs, np.arange(5.0), c, **kw)
        _same(fnp.interp(xs, np.arange(5.0), c, **kw), want, 1e-12)
        _same(fg.jit(lambda f, kw=kw: fnp.interp(xs, np.arange(5.0), f, **kw))(c), want, 1e-12)
    c64 = c.astype(np.complex64)
    _same(fnp.pad(c64, (1, 3), mode="linear_ramp", end_values=(1j, 2)),
          np.pad(c64, (1, 3), mode="linear_ramp", end_values=(1j, 2)), 1e-6)


def test_array_equal_nan_and_bincount_weights_on_complex():
    """Bug: ``array_equal(equal_nan=True)`` ignored complex NaNs (False where NumPy says
    True); ``bincount`` cast complex weights to float64 silently (NumPy raises)."""
    c = np.array([complex(np.nan, 1), 1j, complex(2, np.nan)])
    assert bool(fnp.array_equal(c, c.copy(), equal_nan=True)) is True
    assert bool(fg.jit(lambda a: fnp.array_equal(a, a, equal_nan=True))(c)) is True
    assert bool(fnp.array_equal(c, c.copy())) is False
    with pytest.raises(TypeError, match="bincount: weights must be real"):
        fnp.bincount(np.array([0, 1, 1]), weights=c)


def test_complex_reciprocal_is_numpys_loop():
    """Bug: ``reciprocal`` of complex was ``1 / x``, which differs from NumPy's reciprocal
    loop at 0 (inf+nanj vs nan+nanj) and at subnormals (nan-infj vs 0-infj)."""
    z = np.array([0j, complex(-0.0, -0.0), 1e-320j, 1 + 0j, -2j, complex(np.inf, 1), 1e300 + 1e300j, 3 - 4j])
    for dt in (np.complex128, np.complex64):
        want = np.reciprocal(z.astype(dt))
        np.testing.assert_array_equal(fnp.reciprocal(z.astype(dt)), want)
        np.testing.assert_array_equal(fg.jit(fnp.reciprocal)(z.astype(dt)), want)
    w = z[3:5]
    np.testing.assert_allclose(fg.grad(lambda v: fnp.sum(fnp.abs(fnp.reciprocal(v)) ** 2))(w), _fd_grad(
        lambda v: fnp.sum(fnp.abs(fnp.reciprocal(v)) ** 2), w), atol=1e-6)


@pytest.mark.parametrize("name", ["gamma", "rgamma", "ndtr", "log_ndtr", "erfcx", "exp1", "expi", "digamma", "erf"])
def test_real_only_scipy_special_rejects_complex(name):
    """Bug: ``gamma``/``ndtr``/``log_ndtr``/``erfcx``/``exp1``/``expi`` of complex input
    returned the function of the real part with a zero imaginary part (silently wrong);
    funcgrad.scipy.special is real-only, so they now raise a TypeError naming themselves."""
    import funcgrad.scipy.special as fss

    c = np.array([1 + 2j, -0.5 + 0.3j])
    with pytest.raises(TypeError, match="complex input is not supported"):
        getattr(fss, name)(c)
    with pytest.raises(TypeError, match="complex input is not supported"):
        fg.jit(getattr(fss, name))(c)
