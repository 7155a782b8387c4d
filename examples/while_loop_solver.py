"""Differentiate through an iterative solver whose number of steps is decided at run time.

    python examples/while_loop_solver.py [--quick]

A Newton iteration for the root of Kepler's equation, E - e sin E = M, runs in a
``lax.while_loop`` until converged; ``grad`` goes backwards through however many steps it
took (a run-time tape; JAX's ``while_loop`` has no reverse mode). The derivative is
compared with the implicit-function-theorem answer dE/de = sin E / (1 - e cos E), and the
same gradient is ``jit``-compiled and ``vmap``-ed over many orbits.
"""
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

from _plot import QUICK, figure, save


def eccentric_anomaly(e, mean_anomaly):
    def not_converged(state):
        E, step = state
        return fnp.abs(step) > 1e-13

    def newton(state):
        E, _ = state
        step = (E - e * fnp.sin(E) - mean_anomaly) / (1 - e * fnp.cos(E))
        return E - step, step

    E, _ = lax.while_loop(not_converged, newton, (mean_anomaly + 0.0 * e, fnp.ones_like(mean_anomaly)))
    return E


def main():
    e, M = 0.6, 1.2
    E = eccentric_anomaly(e, M)
    dE_de = fg.grad(eccentric_anomaly)(e, M)
    exact = np.sin(E) / (1 - e * np.cos(E))
    print(f"E = {float(E):.12f}, dE/de = {float(dE_de):.12f} (implicit function theorem: {exact:.12f})")
    assert abs(float(dE_de) - exact) < 1e-10
    n = 50 if QUICK else 2000
    es = np.linspace(0.0, 0.9, n)
    batched = fg.jit(fg.vmap(fg.grad(eccentric_anomaly), in_axes=(0, None)))
    grads = batched(es, M)
    print(f"dE/de over {n} eccentricities (each lane its own trip count): "
          f"min {float(grads.min()):.4f}, max {float(grads.max()):.4f}")
    fig, ax = figure()
    if fig is not None:
        ax.plot(es, grads)
        ax.set(xlabel="eccentricity e", ylabel="dE/de at M = 1.2", title="Gradient through a while_loop solver")
    save(fig, "while_loop_solver")


if __name__ == "__main__":
    main()
