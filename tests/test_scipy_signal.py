"""funcgrad.scipy.signal's convolutions, detrend and spectral analysis against
scipy.signal: every mode, method and boundary on shapes where either input is the
larger, real and complex; jit and derivatives against finite differences."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.scipy import signal as fs
from funcgrad.test_util import check_grads

ss = pytest.importorskip("scipy.signal")
RNG = np.random.default_rng(0)
SHAPES = [((5,), (3,)), ((3,), (5,)), ((6,), (6,)), ((1,), (4,)), ((4, 6), (2, 3)), ((2, 3), (4, 6)), ((7, 7), (3, 4)),
          ((3, 3), (5, 2)), ((3, 4, 5), (2, 2, 3))]


def _pair(s1, s2, cplx):
    a = RNG.normal(size=s1) + (1j * RNG.normal(size=s1) if cplx else 0)
    b = RNG.normal(size=s2) + (0.5j * RNG.normal(size=s2) if cplx else 0)
    return a, b


def _scipy_or_none(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except ValueError:
        return None


@pytest.mark.parametrize("s1,s2", SHAPES)
@pytest.mark.parametrize("cplx", [False, True])
def test_convolve_correlate_match_scipy(s1, s2, cplx):
    a, b = _pair(s1, s2, cplx)
    for mode in ["full", "same", "valid"]:
        for method in ["auto", "direct", "fft"]:
            for mine, theirs in [(fs.convolve, ss.convolve), (fs.correlate, ss.correlate)]:
                want = _scipy_or_none(theirs, a, b, mode, "direct" if method == "auto" else method)
                if want is None:
                    with pytest.raises(ValueError):
                        mine(a, b, mode, method)
                    continue
                got = mine(a, b, mode, method)
                assert got.shape == want.shape
                np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"{mine.__name__} {mode} {method}")
        if len(s1) == 2:
            for boundary in ["fill", "wrap", "symm"]:
                for mine, theirs in [(fs.convolve2d, ss.convolve2d), (fs.correlate2d, ss.correlate2d)]:
                    want = _scipy_or_none(theirs, a, b, mode, boundary, fillvalue=1.5)
                    if want is None:
                        continue
                    got = mine(a, b, mode, boundary, fillvalue=1.5)
                    np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"{mine.__name__} {mode} {boundary}")


def test_convolve_integers_jit_and_grad():
    got = fs.convolve(np.arange(5), np.array([1, 2, 3]))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, ss.convolve(np.arange(5), np.array([1, 2, 3])))
    a, b = RNG.normal(size=(6, 5)), RNG.normal(size=(3, 2))
    np.testing.assert_allclose(fg.jit(lambda a, b: fs.convolve2d(a, b, "same", "wrap"))(a, b),
                               ss.convolve2d(a, b, "same", "wrap"), atol=1e-12)
    check_grads(lambda a, b: fs.correlate(a, b, "same"), (a[0], b[:, 0]), order=2)
    check_grads(lambda a, b: fs.convolve2d(a, b, "full", "symm"), (a, b), order=1)
    with pytest.raises(ValueError, match="same dimensionality"):
        fs.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="boundary"):
        fs.convolve2d(a, b, boundary="reflect")


def test_detrend():
    x = RNG.normal(size=40) + np.arange(40) * 0.3
    for type_ in ["linear", "constant"]:
        for bp in [0, [3, 5], [10, 25, 39]]:
            np.testing.assert_allclose(fs.detrend(x, type=type_, bp=bp), ss.detrend(x, type=type_, bp=bp), atol=1e-12)
    m = RNG.normal(size=(7, 4))
    np.testing.assert_allclose(fs.detrend(m, axis=0), ss.detrend(m, axis=0), atol=1e-12)
    check_grads(lambda x: fs.detrend(x, bp=[5]), (x[:12],), order=1)


SPECTRAL = [dict(), dict(nperseg=16), dict(nperseg=16, noverlap=4, nfft=20), dict(window="hamming", nperseg=10),
            dict(window="blackman", nperseg=9, detrend="linear"), dict(nperseg=16, return_onesided=False),
            dict(nperseg=12, scaling="spectrum"), dict(nperseg=16, average="median"), dict(window="bartlett", nperseg=11),
            dict(nperseg=16, detrend=False), dict(window=0.5 + np.arange(8) / 10)]


def _close(got, want):
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, atol=1e-12)


@pytest.mark.parametrize("kw", SPECTRAL, ids=[str(i) for i in range(len(SPECTRAL))])
def test_welch_csd(kw):
    x, y = RNG.normal(size=100), RNG.normal(size=100)
    m = RNG.normal(size=(3, 70))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(fs.welch(x, fs=3.0, **kw), ss.welch(x, fs=3.0, **kw))
        _close(fs.csd(x, y, **kw), ss.csd(x, y, **kw))
        _close(fs.csd(m, m[0], **kw), ss.csd(m, m[0], **kw))
        _close(fs.welch(m.T, axis=0, **kw), ss.welch(m.T, axis=0, **kw))
    _close(fs.csd(x + 1j * y, y, nperseg=16), ss.csd(x + 1j * y, y, nperseg=16))
    _close(fs.csd(x, y[:80], nperseg=16), ss.csd(x, y[:80], nperseg=16))


STFT = [dict(nperseg=16), dict(nperseg=16, noverlap=5, nfft=32), dict(nperseg=15, boundary="even"),
        dict(nperseg=15, boundary="odd", padded=False), dict(nperseg=16, boundary=None),
        dict(nperseg=16, boundary="constant", detrend="linear"), dict(nperseg=16, return_onesided=False),
        dict(window="hamming", nperseg=20)]


@pytest.mark.parametrize("kw", STFT, ids=[str(i) for i in range(len(STFT))])
def test_stft_istft(kw):
    x, m = RNG.normal(size=100), RNG.normal(size=(3, 70))
    _close(fs.stft(x, fs=2.0, **kw), ss.stft(x, fs=2.0, **kw))
    _close(fs.stft(m, **kw), ss.stft(m, **kw))
    _close(fs.stft(m.T, axis=0, **kw), ss.stft(m.T, axis=0, **kw))
    _, _, z = ss.stft(x, **kw)
    ikw = {k: v for k, v in kw.items() if k in ("nperseg", "noverlap", "nfft", "window")}
    ikw["boundary"] = kw.get("boundary", "zeros") is not None
    ikw["input_onesided"] = kw.get("return_onesided", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (SciPy: "NOLA condition failed" without a boundary)
        want = ss.istft(z, fs=2.0, **ikw)
    _close(fs.istft(z, fs=2.0, **ikw), want)


def test_istft_axes_and_roundtrip():
    m = RNG.normal(size=(3, 64))
    _, _, z = ss.stft(m, nperseg=16)
    _close(fs.istft(z, nperseg=16), ss.istft(z, nperseg=16))
    zt = np.moveaxis(z, -1, 0)
    _close(fs.istft(zt, nperseg=16, time_axis=0, freq_axis=-1), ss.istft(zt, nperseg=16, time_axis=0, freq_axis=-1))
    rt = fg.jit(lambda x: fs.istft(fs.stft(x, nperseg=16)[2], nperseg=16)[1])(m)
    np.testing.assert_allclose(rt[:, :64], m, atol=1e-12)


@pytest.mark.parametrize("window", ["hann", "hamming", "blackman", "nuttall", "blackmanharris", "flattop", "bartlett",
                                    "triang", "cosine", "bohman", "boxcar", ("kaiser", 8.6), ("tukey", 0.3),
                                    ("tukey", 1.0), ("gaussian", 3.0), ("general_hamming", 0.6)])
def test_windows_match_scipy(window):
    x = RNG.normal(size=100)
    for n in [5, 8, 17]:
        _close(fs.welch(x, window=window, nperseg=n), ss.welch(x, window=window, nperseg=n))
    _, _, z = ss.stft(x, window=window, nperseg=16)
    _close(fs.istft(z, window=window, nperseg=16), ss.istft(z, window=window, nperseg=16))


def test_spectral_jit_and_grad():
    x = RNG.normal(size=64)
    np.testing.assert_allclose(fg.jit(lambda x: fs.welch(x, nperseg=16)[1])(x), ss.welch(x, nperseg=16)[1], atol=1e-12)
    check_grads(lambda x: fs.welch(x, nperseg=16)[1], (x,), order=1)
    check_grads(lambda x: fs.istft(fs.stft(x, nperseg=8)[2], nperseg=8)[1], (x[:24],), order=1)
    with pytest.raises(ValueError, match="window"):
        fs.welch(x, window="kaiser")  # (needs its beta)
    with pytest.raises(ValueError, match="window"):
        fs.welch(x, window="dpss")
    with pytest.raises(ValueError, match="noverlap"):
        fs.welch(x, nperseg=8, noverlap=8)


def test_float32_stays_float32():
    x = RNG.normal(size=64).astype(np.float32)
    for got, want in [(fs.welch(x, nperseg=16)[1], ss.welch(x, nperseg=16)[1]), (fs.detrend(x, bp=[9]), ss.detrend(x, bp=[9])),
                      (fs.stft(x, nperseg=16)[2], ss.stft(x, nperseg=16)[2]),
                      (fs.convolve(x, x[:3]), ss.convolve(x, x[:3])), (fs.csd(x, x[::-1], nperseg=8)[1],
                                                                          ss.csd(x, x[::-1], nperseg=8)[1])]:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)
