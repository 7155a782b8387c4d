"""``jit(odeint)`` of a 10-state ODE against ``scipy.integrate.solve_ivp(method="RK45")``
at matching tolerances (issue #13; goal: funcgrad <= 0.2x SciPy's time).

    python bench/ode_bench.py

The system: a damped chain of 5 coupled oscillators (linear, 10 states) plus a mild
cubic nonlinearity, integrated over t in [0, 10] with 50 output times, rtol = atol =
1e-8. Both are Dormand-Prince 5(4) with dense output; SciPy steps in Python calling a
NumPy right-hand side, funcgrad runs one compiled loop. Also prints the step counts
implied by the results' agreement and the time of ``jit(grad)`` (adjoint method).
"""
from __future__ import annotations

import statistics

import numpy as np
import scipy.integrate as si

import funcgrad as fg
from funcgrad.experimental.ode import odeint

from common import fmt, interleaved_times

N = 10
rng = np.random.default_rng(0)
K = np.diag(-2.0 * np.ones(5)) + np.diag(np.ones(4), 1) + np.diag(np.ones(4), -1)
A = np.block([[np.zeros((5, 5)), np.eye(5)], [K, -0.1 * np.eye(5)]])
Y0 = rng.standard_normal(N)
TS = np.linspace(0.0, 10.0, 50)
TOL = 1e-8


def rhs_fg(y, t, a):
    return a @ y - 0.05 * y ** 3


def rhs_np(t, y):
    return A @ y - 0.05 * y ** 3


solve_fg = fg.jit(lambda y0, a: odeint(rhs_fg, y0, TS, a, rtol=TOL, atol=TOL))
grad_fg = fg.jit(fg.grad(lambda y0, a: odeint(rhs_fg, y0, TS, a, rtol=TOL, atol=TOL)[-1].sum(), argnums=(0, 1)))


def solve_scipy():
    return si.solve_ivp(rhs_np, (TS[0], TS[-1]), Y0, method="RK45", t_eval=TS, rtol=TOL, atol=TOL)


def main():
    ours = solve_fg(Y0, A)
    ref = solve_scipy()
    print(f"max |funcgrad - scipy| over the trajectory: {np.max(np.abs(ours - ref.y.T)):.2e} "
          f"(scipy: {ref.nfev} function evaluations)")
    grad_fg(Y0, A)
    times = interleaved_times([("scipy solve_ivp RK45", solve_scipy), ("funcgrad jit(odeint)", lambda: solve_fg(Y0, A)),
                               ("funcgrad jit(grad(odeint))", lambda: grad_fg(Y0, A))], rounds=7, min_time=0.1)
    scipy_t = statistics.median(times["scipy solve_ivp RK45"])
    print("\n10-state ODE, t in [0, 10], 50 outputs, rtol = atol = 1e-8 (medians)")
    for name, ts in times.items():
        t = statistics.median(ts)
        print(f"  {name:30s} {fmt(t)}   {t / scipy_t:6.3f}x scipy")
    ratios = [a / b for a, b in zip(times["funcgrad jit(odeint)"], times["scipy solve_ivp RK45"])]
    print(f"  ratio jit(odeint) / solve_ivp (median of per-round ratios): {statistics.median(ratios):.3f}x "
          f"(goal <= 0.2x)")


if __name__ == "__main__":
    main()
