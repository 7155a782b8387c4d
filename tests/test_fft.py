"""funcgrad.numpy.fft, lax.fft and scipy.signal.fftconvolve (issue #16).

Values and dtypes vs numpy.fft over the issue's lengths, 2-D/3-D shapes, every norm, n/s
crop and pad, and input dtypes; errors; the transposes vs the dense DFT matrix; vmap with
the batch axis among the transformed ones; the spectral-derivative scenario. Derivatives
vs finite differences, vmap vs loop and jit vs eager of each function are op-table rows
(``tests/op_rows/fft.py``).
"""
import enum
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.scipy import signal as fsignal

from harness import CHILD_COUNTING_COMPILES, compiled_and_evaluated

LENGTHS = [1, 2, 3, 5, 7, 16, 17, 97, 128, 1000, 1024]
NORMS = [None, "backward", "ortho", "forward"]
rng = np.random.default_rng(16)


def crand(*shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def close(got, expected, rtol=1e-13):
    """Same type, shape and dtype; values within rtol of the largest magnitude (an FFT's
    rounding error is relative to the whole transform, not to each small entry)."""
    assert isinstance(got, np.ndarray)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, got.dtype,
                                                                          expected.shape, expected.dtype)
    tol = rtol if expected.dtype in (np.float64, np.complex128) else 3e-6
    scale = max(float(np.max(np.abs(expected), initial=0.0)), 1e-300)
    np.testing.assert_allclose(got, expected, rtol=0, atol=tol * scale)


# --- values vs numpy.fft ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_1d_lengths_and_norms(name):
    for n in LENGTHS:
        x = rng.standard_normal(n) if name in ("rfft", "ihfft") else crand(n)
        if name in ("irfft", "hfft") and n == 1:
            continue  # (the default output length 2*(1-1) = 0 is an error: see test_errors)
        for norm in NORMS:
            close(getattr(fnp.fft, name)(x, norm=norm), getattr(np.fft, name)(x, norm=norm))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_1d_n_crop_and_pad(name):
    x = rng.standard_normal((3, 6)) if name in ("rfft", "ihfft") else crand(3, 6)
    for n in (1, 2, 5, 6, 9, 16):
        for axis in (-1, 0):
            close(getattr(fnp.fft, name)(x, n=n, axis=axis), getattr(np.fft, name)(x, n=n, axis=axis))


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"])
def test_nd_shapes_s_axes_norms(name):
    real_in = name.startswith("rfft")
    for shape, s, axes in [((4, 6), None, None), ((5, 7), (3, 9), None), ((2, 3, 4), None, None),
                           ((3, 4, 5), (4, 2, 6), (0, 1, 2)), ((2, 17, 16), None, (1, 2)),
                           ((6, 5, 3), (4, 7), (2, 0)), ((2, 3, 2, 3), None, (0, 1, 2, 3))]:
        if name.endswith("2") and (axes is None and len(shape) > 2 or axes is not None and len(axes) != 2):
            axes = (-2, -1)
            s = None if s is None else s[-2:]
        x = rng.standard_normal(shape) if real_in else crand(*shape)
        for norm in NORMS:
            kw = dict(s=s, norm=norm) if axes is None else dict(s=s, axes=axes, norm=norm)
            if s is not None and axes is None:  # (NumPy 2 deprecates s without axes: same meaning)
                kw["axes"] = tuple(range(len(shape) - len(s), len(shape)))
            close(getattr(fnp.fft, name)(x, **kw), getattr(np.fft, name)(x, **kw))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64,
                                   np.uint8, np.bool_])
def test_input_dtypes(dtype):
    x = np.asarray(rng.standard_normal((3, 8)) * 4, dtype) if np.dtype(dtype).kind != "c" else crand(3, 8, dtype=dtype)
    for name in ["fft", "ifft", "irfft", "hfft", "fft2", "ifftn", "irfftn"] + (
            ["rfft", "ihfft", "rfft2", "rfftn"] if np.dtype(dtype).kind != "c" else []):
        close(getattr(fnp.fft, name)(x), getattr(np.fft, name)(x))


def test_complex_input_to_rfft_raises():
    for name in ("rfft", "ihfft", "rfftn"):
        with pytest.raises(TypeError, match=f"{name}: the input must be real"):
            getattr(fnp.fft, name)(crand(4))


def test_freqs_and_shifts():
    for n in (1, 2, 5, 8):
        for d in (1.0, 0.25):
            close(fnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), rtol=0)
            close(fnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), rtol=0)
    assert fnp.fft.fftfreq(4, dtype=np.float32).dtype == np.float32
    x = np.arange(30).reshape(5, 6)
    for axes in (None, 0, 1, (0, 1), (-1,)):
        np.testing.assert_array_equal(fnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(fnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))
    f = fg.jit(lambda d: fnp.fft.fftfreq(6, d))
    close(f(0.5), np.fft.fftfreq(6, 0.5))


def test_errors():
    with pytest.raises(ValueError, match="fft: invalid norm value 'bad'"):
        fnp.fft.fft(np.ones(4), norm="bad")
    with pytest.raises(ValueError, match=r"ifft2: invalid norm value 'BACKWARD'"):
        fnp.fft.ifft2(np.ones((2, 2)), norm="BACKWARD")
    with pytest.raises(ValueError, match=r"fft: invalid number of FFT data points \(0\)"):
        fnp.fft.fft(np.ones(4), n=0)
    with pytest.raises(ValueError, match=r"irfft: invalid number of FFT data points \(0\)"):
        fnp.fft.irfft(np.ones(1))
    with pytest.raises(np.exceptions.AxisError):
        fnp.fft.fft(np.ones(4), axis=2)
    with pytest.raises(ValueError, match="fft: the input must have at least one axis"):
        fnp.fft.fft(np.float64(1.0))
    with pytest.raises(ValueError, match="fftn: shape s=.* and axes=.* have different lengths"):
        fnp.fft.fftn(np.ones((4, 4)), s=(3,), axes=(0, 1))
    with pytest.raises(ValueError, match="fftn: repeated axes"):
        fnp.fft.fftn(np.ones((4, 4)), axes=(0, 0))
    with pytest.raises(ValueError, match="fftfreq: n must be positive"):
        fnp.fft.fftfreq(0)
    with pytest.raises(TypeError, match="lax.fft: an rfft needs a real operand"):
        lax.fft(crand(4), "rfft", (4,))
    with pytest.raises(ValueError, match=r"fft: a fft of fft_lengths \(5,\) needs trailing axes"):
        lax.fft(crand(4), "fft", (5,))
    with pytest.raises(ValueError, match="lax.fft: fft_type must be"):
        lax.fft(crand(4), "dct", (4,))


# --- lax.fft -----------------------------------------------------------------------------------------
class JaxFftType(enum.IntEnum):  # JAX's spelling (jax.lax.FftType), recognised by name
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def test_lax_fft_types_and_conversions():
    x = rng.standard_normal((2, 4, 6))
    for typ in (lax.FftType.FFT, JaxFftType.FFT, "fft", "FFT"):
        close(lax.fft(x, typ, (4, 6)), np.fft.fftn(x, axes=(1, 2)))
    close(lax.fft(x.astype(np.float32), lax.FftType.RFFT, [6]), np.fft.rfft(x.astype(np.float32)))
    y = crand(3, 4, dtype=np.complex64)
    close(lax.fft(y, JaxFftType.IRFFT, (3, 6)), np.fft.irfftn(y, s=(3, 6), axes=(0, 1)))
    close(lax.fft(np.arange(4), "fft", (4,)), np.fft.fft(np.arange(4)))  # int -> complex128
    assert str(fg.make_jaxpr(lambda v: lax.fft(v, "ifft", (6,)))(x)).count("fft[fft_lengths=(6,) fft_type=ifft]") == 1


# --- transposes vs the dense DFT matrix ---------------------------------------------------------
def _dense_vjp(f, x, ct):
    """The vjp of the real-linear map f at ct, from f's dense matrix over the reals, under
    the pairing <a, b> = Re(sum(a * b))."""
    cols = []
    for idx in np.ndindex(x.shape):
        for d in ([1.0] if x.dtype.kind == "f" else [1.0, 1j]):
            e = np.zeros(x.shape, x.dtype)
            e[idx] = d
            y = np.asarray(f(e))
            cols.append(np.concatenate([y.real.ravel(), y.imag.ravel()]))
    m = np.array(cols).T
    g = m.T @ np.concatenate([ct.real.ravel(), -ct.imag.ravel()])
    if x.dtype.kind == "f":
        return g.reshape(x.shape)
    g = g.reshape(-1, 2)
    return (g[:, 0] - 1j * g[:, 1]).reshape(x.shape)


@pytest.mark.parametrize("typ,shape,lengths", [
    ("fft", (2, 5), (5,)), ("ifft", (3, 4), (3, 4)), ("rfft", (2, 6), (6,)), ("rfft", (3, 5), (3, 5)),
    ("irfft", (2, 4), (6,)), ("irfft", (3, 4), (3, 7)), ("irfft", (2, 3, 3), (2, 3, 4))])
def test_transpose_is_the_dense_dft_transpose(typ, shape, lengths):
    x = rng.standard_normal(shape) if typ == "rfft" else crand(*shape)

    def f(v):
        return lax.fft(v, typ, lengths)

    y, pullback = fg.vjp(f, x)
    ct = crand(*y.shape) if y.dtype.kind == "c" else rng.standard_normal(y.shape)
    (got,) = pullback(ct.astype(y.dtype))
    np.testing.assert_allclose(got, _dense_vjp(f, x, ct), atol=1e-12)
    t = fg.linear_transpose(f, x)(ct.astype(y.dtype))[0]
    np.testing.assert_allclose(t, got, atol=1e-12)


# --- vmap with the batch axis among the transformed axes ------------------------------------------
def test_vmap_batch_axis_inside_transformed_axes():
    x = crand(3, 4, 5)
    for in_axis in (0, 1, 2):
        got = fg.vmap(lambda v: fnp.fft.fft2(v, norm="ortho"), in_axes=in_axis)(x)
        loop = np.stack([np.fft.fft2(np.take(x, k, axis=in_axis), norm="ortho") for k in range(x.shape[in_axis])])
        close(got, loop)
    r = rng.standard_normal((4, 6, 3))
    got = fg.vmap(lambda v: fnp.fft.irfft(fnp.fft.rfft(v) * 1j, n=6), in_axes=2)(r)
    close(got, np.stack([np.fft.irfft(np.fft.rfft(r[:, :, k]) * 1j, n=6) for k in range(3)]))


# --- jit: the native lowering (compile_jaxpr must succeed: no evaluator fallback) -------------
def native(fun, *args):
    """The natively compiled outputs of ``fun`` and its evaluated ones (same dtypes)."""
    got, expected = compiled_and_evaluated(fun, *args)
    for g, e in zip(got, expected):
        close(np.asarray(g), np.asarray(e))
    return got


@pytest.mark.parametrize("n", LENGTHS)
def test_jit_fft_and_ifft_compile_natively(n):
    z = crand(2, n)
    native(lambda v: (fnp.fft.fft(v), fnp.fft.ifft(v, norm="ortho")), z)


@pytest.mark.parametrize("n", [1, 2, 7, 16, 17, 1000])
def test_jit_rfft_irfft_hfft_compile_natively(n):
    r = rng.standard_normal((3, n))
    native(lambda v: (fnp.fft.rfft(v), fnp.fft.irfft(fnp.fft.rfft(v), n=n), fnp.fft.ihfft(v)), r)
    native(lambda v: fnp.fft.hfft(v, n=2 * n), crand(n // 2 + 1))


def test_jit_nd_dtypes_and_fused_inputs_compile_natively():
    x32 = rng.standard_normal((3, 5, 4)).astype(np.float32)
    got = native(lambda v: (fnp.fft.fftn(v), fnp.fft.rfftn(v, s=(4, 6), axes=(0, 2)),
                            fnp.fft.irfftn(fnp.fft.rfftn(v * 2), s=(3, 5, 4))), x32)
    assert [g.dtype for g in got] == [np.complex64, np.complex64, np.float32]
    z = crand(2, 3, 4, 5)
    native(lambda v: (fnp.fft.fft2(v * 1j + 1), fnp.fft.ifftn(v, axes=(1, 2, 3), norm="forward"),
                      fnp.fft.fftn(v, axes=(0, 1, 2, 3))), z)
    native(lambda v: fnp.fft.irfft2(v, s=(3, 9)), crand(4, 3, 5, dtype=np.complex64))
    native(lambda v: fnp.fft.fft(v[::2, 1:]), crand(6, 9))  # a strided view, materialised first
    native(lambda v: fsignal.fftconvolve(v, v[:3] * 2, "same"), rng.standard_normal(10))


def test_jit_grad_and_vmap_compile_natively():
    r = rng.standard_normal((4, 8))
    native(fg.grad(lambda v: fnp.sum(fnp.abs(fnp.fft.rfft(v)) ** 2)), r)
    native(fg.vmap(lambda v: fnp.fft.ifft2(v), in_axes=1), crand(3, 2, 4))
    native(fg.jacrev(lambda v: fnp.real(fnp.fft.fft(v))), rng.standard_normal(5))


# --- the spectral derivative scenario ---------------------------------------------------------------
N_GRID = 64
GRID = 2 * np.pi * np.arange(N_GRID) / N_GRID
WAVENUMBERS = np.fft.fftfreq(N_GRID, 1.0 / N_GRID)  # integers: the domain is 2*pi long


def spectral_dx(f):
    return fnp.real(fnp.fft.ifft(1j * WAVENUMBERS * fnp.fft.fft(f)))


def test_spectral_derivative_matches_analytic_under_jit():
    a = 0.7
    f = np.exp(np.sin(GRID) * a)
    exact = a * np.cos(GRID) * f
    eager = spectral_dx(f)
    jitted = fg.jit(spectral_dx)(f)
    native(spectral_dx, f)  # (jit compiles it natively)
    np.testing.assert_allclose(eager, exact, atol=1e-12)
    np.testing.assert_allclose(jitted, exact, atol=1e-12)
    assert jitted.dtype == eager.dtype == np.float64


def test_spectral_derivative_grad_wrt_parameter():
    def energy(a):  # integral of (df/dx)^2 for f = exp(a sin x)
        f = fnp.exp(a * fnp.sin(GRID))
        return fnp.sum(spectral_dx(f) ** 2) * (2 * np.pi / N_GRID)

    a, eps = 0.7, 1e-6
    fd = (energy(a + eps) - energy(a - eps)) / (2 * eps)
    g = fg.grad(energy)(a)
    np.testing.assert_allclose(g, fd, rtol=1e-7)
    np.testing.assert_allclose(fg.jit(fg.grad(energy))(a), g, rtol=1e-12)
    native(fg.grad(energy), a)


# --- fftconvolve vs scipy.signal -------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_matches_scipy(mode):
    sig = pytest.importorskip("scipy.signal")
    cases = [((7,), (3,), None), ((3,), (8,), None), ((5, 6), (3, 2), None), ((4, 5), (1, 3), None),
             ((4, 9), (4, 3), (1,)), ((4, 1), (1, 3), None), ((16,), (16,), None)]
    for s1, s2, axes in cases:
        for cx in (False, True):
            a, b = rng.standard_normal(s1), rng.standard_normal(s2)
            if cx:
                a = a + 1j * rng.standard_normal(s1)
            close(fsignal.fftconvolve(a, b, mode=mode, axes=axes), sig.fftconvolve(a, b, mode=mode, axes=axes),
                  rtol=1e-12)
    a32 = rng.standard_normal(9).astype(np.float32)
    close(fsignal.fftconvolve(a32, a32[:4], mode), sig.fftconvolve(a32, a32[:4], mode))


def test_fftconvolve_grad_and_errors():
    a, b = rng.standard_normal(6), rng.standard_normal(3)
    fg.test_util.check_grads(lambda u, v: fsignal.fftconvolve(u, v, "same"), (a, b), order=1)
    with pytest.raises(ValueError, match="fftconvolve: acceptable mode"):
        fsignal.fftconvolve(a, b, mode="wrap")
    with pytest.raises(ValueError, match=r"fftconvolve: in1 and in2 should have the same dimensionality"):
        fsignal.fftconvolve(a, b[None])
    with pytest.raises(ValueError, match="fftconvolve: for 'valid' mode"):
        fsignal.fftconvolve(np.ones((2, 5)), np.ones((3, 2)), mode="valid")


def test_numpy_fft_on_a_tracer_dispatches_to_funcgrad():
    x = rng.standard_normal(6)
    closed = fg.make_jaxpr(lambda v: np.fft.rfft(v, norm="ortho"))(x)
    assert "fft_type=rfft" in str(closed)
    close(fg.jit(lambda v: np.fft.irfft(np.fft.rfft(v), n=6))(x), x)


# --- the disk cache: a new process links the program and binds its plans without LLVM ------
_CHILD = CHILD_COUNTING_COMPILES + textwrap.dedent("""
    f = fg.jit(lambda v: fnp.fft.irfft(fnp.fft.fft2(v).real[:, :4] * 2.0, n=7))
    out = f(np.linspace(-1.0, 1.0, 35).reshape(5, 7))
    print(np.asarray(out).tobytes().hex(), len(optimised))
""")


def test_a_new_process_binds_the_plans_from_the_disk_cache(tmp_path):
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=str(tmp_path), PYTHONPATH=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    runs = []
    for _ in range(2):
        res = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=300)
        assert res.returncode == 0, res.stderr
        runs.append(res.stdout.split())
    (cold, cold_optimised), (warm, warm_optimised) = runs
    assert int(cold_optimised) >= 1 and int(warm_optimised) == 0
    assert warm == cold
    x = np.linspace(-1.0, 1.0, 35).reshape(5, 7)
    expected = np.fft.irfft(np.fft.fft2(x).real[:, :4] * 2.0, n=7)
    np.testing.assert_allclose(np.frombuffer(bytes.fromhex(cold)).reshape(5, 7), expected, atol=1e-13)
