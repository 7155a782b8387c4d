"""A pseudo-spectral PDE solver with FFTs: viscous Burgers' equation, and the gradient of
its solution with respect to the viscosity.

    python examples/fft_pde.py [--quick]

u_t + u u_x = nu u_xx on a periodic domain: derivatives in Fourier space
(``fnp.fft.rfft``/``irfft``), the stiff diffusion handled exactly by an integrating
factor, RK4 in time, the time loop a ``lax.scan`` inside one ``jit``. ``grad`` of the final
energy with respect to ``nu`` goes back through every FFT and step, and is checked
against a central difference. The space-time field is saved as a picture.
"""
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

from _plot import QUICK, figure, save

N = 128
L = 2 * np.pi
x = np.arange(N) * L / N
k = 2 * np.pi * np.fft.rfftfreq(N, d=L / N)  # wavenumbers of the rfft
dealias = (np.abs(k) < (2 / 3) * np.max(np.abs(k))).astype(np.float64)


def solve(nu, u0, dt=0.01, steps=200, every=10):
    """Fourier coefficients of u at every ``every``-th of ``steps`` steps."""
    decay = fnp.exp(-nu * k**2 * dt / 2)  # exp(-nu k^2 t) over half a step

    def nonlinear(v):  # -(u^2/2)_x in Fourier space
        u = fnp.fft.irfft(v, n=N)
        return -0.5j * k * dealias * fnp.fft.rfft(u * u)

    def rk4(v, _):
        a = dt * nonlinear(v)
        b = dt * nonlinear(decay * (v + a / 2))
        c = dt * nonlinear(decay * v + b / 2)
        d = dt * nonlinear(decay**2 * v + decay * c)
        v = decay**2 * v + (decay**2 * a + 2 * decay * (b + c) + d) / 6
        return v, None

    def block(v, _):
        v, _ = lax.scan(rk4, v, None, length=every)
        return v, fnp.fft.irfft(v, n=N)

    _, field = lax.scan(block, fnp.fft.rfft(u0), None, length=steps // every)
    return field


def final_energy(nu, u0, steps):
    u = solve(nu, u0, steps=steps)[-1]
    return 0.5 * fnp.mean(u * u)


def main():
    steps = 200 if QUICK else 1000
    u0 = np.sin(x) + 0.5 * np.sin(2 * x + 1.0)
    nu = 0.05
    field = fg.jit(solve, static_argnames=("steps",))(nu, u0, steps=steps)
    energy = fg.jit(final_energy, static_argnums=2)
    d_energy = fg.jit(fg.grad(final_energy), static_argnums=2)(nu, u0, steps)
    h = 1e-6
    fd = (energy(nu + h, u0, steps) - energy(nu - h, u0, steps)) / (2 * h)
    print(f"energy {0.5 * np.mean(u0**2):.4f} -> {float(energy(nu, u0, steps)):.4f} over t = {steps * 0.01:g}")
    print(f"d(final energy)/d(nu) = {float(d_energy):.6f} (central difference {float(fd):.6f})")
    assert abs(float(d_energy) - float(fd)) < 1e-5 * max(1.0, abs(float(fd)))
    fig, ax = figure()
    if fig is not None:
        image = ax.imshow(np.asarray(field), aspect="auto", origin="lower", cmap="RdBu_r",
                          extent=[0, L, 0, steps * 0.01])
        fig.colorbar(image, ax=ax, label="u")
        ax.set(xlabel="x", ylabel="t", title=f"Burgers' equation, nu = {nu}")
    save(fig, "fft_pde")


if __name__ == "__main__":
    main()
