"""Op-table rows for ``funcgrad.numpy.fft`` and ``lax.fft`` (issue #16): values vs
``numpy.fft``, jvp with complex random tangents (real and imaginary directions) and vjp
vs jvp under JAX's pairing, to second order, vmap vs loop, jit vs eager. Lengths and
norms are mixed across rows; ``tests/test_fft.py`` sweeps them eagerly."""
import numpy as np

from harness import lam, rand, row

c64, c128 = np.complex64, np.complex128


def fft_row(name, fn_name, *args, **static):
    import funcgrad.numpy as fnp

    f, g = getattr(fnp.fft, fn_name), getattr(np.fft, fn_name)
    return row(f"fft/{name}", lambda *a: f(*a, **static), lambda *a: g(*a, **static), *args)


ROWS = [
    fft_row("fft/c128", "fft", rand(2, 5, dtype=c128)),
    fft_row("fft/f64-n-pad", "fft", rand(3, 4), n=6),
    fft_row("fft/c64-axis0-ortho", "fft", rand(5, 2, dtype=c64), axis=0, norm="ortho"),
    fft_row("fft/i32", "fft", rand(4, dtype=np.int32)),
    fft_row("ifft/c128-forward", "ifft", rand(7, dtype=c128), norm="forward"),
    fft_row("ifft/c128-n-crop", "ifft", rand(2, 6, dtype=c128), n=4),
    fft_row("rfft/f64", "rfft", rand(2, 6)),
    fft_row("rfft/f32-odd-ortho", "rfft", rand(7, dtype=np.float32), norm="ortho"),
    fft_row("irfft/c128", "irfft", rand(2, 4, dtype=c128)),
    fft_row("irfft/c128-n-odd", "irfft", rand(4, dtype=c128), n=7),
    fft_row("irfft/c64-forward", "irfft", rand(3, dtype=c64), norm="forward"),
    fft_row("hfft/c128", "hfft", rand(4, dtype=c128)),
    fft_row("ihfft/f64-ortho", "ihfft", rand(5), norm="ortho"),
    fft_row("fft2/c128", "fft2", rand(3, 4, dtype=c128)),
    fft_row("ifft2/c128-s", "ifft2", rand(2, 3, 4, dtype=c128), s=(2, 5)),
    fft_row("rfft2/f64", "rfft2", rand(4, 5)),
    fft_row("irfft2/c128", "irfft2", rand(3, 3, dtype=c128)),
    fft_row("fftn/c128-3d", "fftn", rand(2, 3, 2, dtype=c128)),
    fft_row("ifftn/c128-axes", "ifftn", rand(3, 2, 4, dtype=c128), axes=(0, 2), norm="ortho"),
    fft_row("rfftn/f64-s", "rfftn", rand(3, 4), s=(4, 6), axes=(0, 1)),
    fft_row("irfftn/c128-3d-s", "irfftn", rand(2, 2, 3, dtype=c128), s=(2, 2, 5), axes=(0, 1, 2)),
    fft_row("fftshift", "fftshift", rand(3, 4)),
    fft_row("ifftshift/axis", "ifftshift", rand(3, 5, dtype=c128), axes=1),
    lam("fft/fftfreq-d", lambda m, d: m.fft.fftfreq(6, d), np.float64(0.3)),
    lam("fft/rfftfreq-d", lambda m, d: m.fft.rfftfreq(7, d), np.float64(0.2)),
    # the spectral derivative (one row: its values, both derivative modes, vmap and jit)
    lam("fft/spectral-derivative",
        lambda m, f: m.real(m.fft.ifft(1j * m.fft.fftfreq(8, 1 / 8) * m.fft.fft(f))), rand(8)),
    lam("fft/irfft-rfft-roundtrip", lambda m, x: m.fft.irfft(m.fft.rfft(x) * 2.0, n=5), rand(2, 5)),
]
