"""Sensitivities of an ODE solution to its parameters, by the adjoint method.

    python examples/ode_sensitivities.py [--quick]

Lotka-Volterra predator-prey dynamics are integrated with
``funcgrad.experimental.ode.odeint`` (adaptive Dormand-Prince); ``grad`` of the final
prey population with respect to the four rate parameters runs the adjoint ODE backwards,
and is checked against central finite differences.
"""
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.experimental.ode import odeint

from _plot import QUICK, figure, save


def lotka_volterra(state, t, params):
    prey, predator = state[0], state[1]
    a, b, c, d = params[0], params[1], params[2], params[3]
    return fnp.stack([a * prey - b * prey * predator, d * prey * predator - c * predator])


def final_prey(params, y0, t):
    return odeint(lotka_volterra, y0, t, params, rtol=1e-10, atol=1e-10)[-1, 0]


def main():
    params = np.array([1.0, 0.4, 1.5, 0.3])
    y0 = np.array([6.0, 3.0])
    t = np.linspace(0.0, 2.0 if QUICK else 10.0, 100)
    trajectory = odeint(lotka_volterra, y0, t, params)
    sensitivity = fg.grad(final_prey)(params, y0, t)
    print("d(final prey) / d(a, b, c, d):", np.array2string(np.asarray(sensitivity), precision=4))
    h = 1e-5
    fd = np.array([(final_prey(params + h * e, y0, t) - final_prey(params - h * e, y0, t)) / (2 * h)
                   for e in np.eye(4)])
    error = np.max(np.abs(np.asarray(sensitivity) - fd)) / np.max(np.abs(fd))
    print(f"largest difference from central finite differences: {error:.1e} (relative)")
    assert error < 1e-5
    fig, ax = figure()
    if fig is not None:
        ax.plot(t, trajectory[:, 0], label="prey")
        ax.plot(t, trajectory[:, 1], label="predator")
        ax.set(xlabel="t", title="Lotka-Volterra, integrated by odeint")
        ax.legend()
    save(fig, "ode_sensitivities")


if __name__ == "__main__":
    main()
