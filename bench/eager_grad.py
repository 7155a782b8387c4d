"""Eager reverse-mode overhead (issue #3): funcgrad vs autograd vs hand-written NumPy.

    python bench/eager_grad.py

1. value_and_grad of a 784-256-10 tanh MLP with softmax cross-entropy, batch 128,
   against a hand-written NumPy forward+backward pass (autograd: ~1.7x).
2. Per-example gradients of linear regression (1000 x 100) by a Python loop of
   grad calls, against the same loop with a hand-written gradient (autograd: ~57x).
3. value_and_grad of a Gaussian-process negative log marginal likelihood on 30 points
   (RBF kernel, ``solve`` + ``slogdet``, autograd's examples/gaussian_process.py in
   substance), X 30 x 1 and 30 x 2, against a hand-written NumPy value and gradient:
   what ``scipy.optimize.minimize(value_and_grad(nll), jac=True)`` calls hundreds of times.
4. Eager ``grad`` through ``funcgrad.experimental.ode.odeint`` (Lotka-Volterra, 20
   output times, adjoint method) against the eager forward solve (goal: <= 5x), and
   autograd's ``odeint`` (SciPy's LSODA, its adjoint) for reference.
autograd is optional: it is measured when installed, skipped otherwise.

Run it with autograd importable to get both columns in one run, e.g.
``PYTHONPATH=. /work/jaxenv/bin/python bench/eager_grad.py`` (``--gp`` / ``--ode``: only
those rows).

Contenders are timed interleaved (round after round), so load that comes and goes on a
shared machine hits them alike; funcgrad / autograd is a median of per-round ratios.
The MLP is timed in one process per library (see ``main``): glibc's heap state, which
decides how many page faults each call takes, depends on what else ran in the process.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from common import fmt, interleaved_times, table  # first: it pins BLAS to one thread before NumPy loads

# isort: split
import numpy as np

# Measure this checkout's funcgrad, whatever an installed (e.g. editable) copy points to.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # optional comparison
    autograd = anp = None

rng = np.random.default_rng(0)
W1, b1 = rng.normal(size=(784, 256)) * 0.05, np.zeros(256)
W2, b2 = rng.normal(size=(256, 10)) * 0.05, np.zeros(10)
X = rng.normal(size=(128, 784))
Y = np.eye(10)[rng.integers(0, 10, 128)]
PARAMS = (W1, b1, W2, b2)


def mlp_loss(np_, params, x, y):
    w1, c1, w2, c2 = params
    h = np_.tanh(x @ w1 + c1)
    logits = h @ w2 + c2
    m = np_.max(logits, axis=1, keepdims=True)
    logp = logits - m - np_.log(np_.sum(np_.exp(logits - m), axis=1, keepdims=True))
    return -np_.sum(logp * y) / x.shape[0]


def mlp_numpy_value_and_grad(params, x, y):
    w1, c1, w2, c2 = params
    a = x @ w1 + c1
    h = np.tanh(a)
    logits = h @ w2 + c2
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(axis=1, keepdims=True)
    logp = logits - m - np.log(s)
    n = x.shape[0]
    loss = -np.sum(logp * y) / n
    dlogits = (e / s - y) / n
    dw2, dc2 = h.T @ dlogits, dlogits.sum(0)
    da = (dlogits @ w2.T) * (1 - h * h)
    return loss, (x.T @ da, da.sum(0), dw2, dc2)


def per_example_numpy(w, xs, ys):
    return [2.0 * (x @ w - y) * x for x, y in zip(xs, ys)]


def gp_nll(np_, params, x, y):
    """Negative log marginal likelihood of a GP with an RBF kernel and a constant mean."""
    amp, ls, noise, mean = np_.exp(params[0]), np_.exp(params[1]), np_.exp(params[2]), params[3]
    sqdist = np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=2)  # (data: a constant)
    n = x.shape[0]
    k = amp * np_.exp(-0.5 * sqdist / ls ** 2) + noise * np_.eye(n)
    r = y - mean
    return 0.5 * r @ np_.linalg.solve(k, r) + 0.5 * np_.linalg.slogdet(k)[1] + 0.5 * n * np.log(2 * np.pi)


def gp_nll_cholesky(np_, solve_triangular, params, x, y):
    """``gp_nll`` through a Cholesky factor and two triangular solves (examples/gaussian_process.py's way)."""
    amp, ls, noise, mean = np_.exp(params[0]), np_.exp(params[1]), np_.exp(params[2]), params[3]
    sqdist = np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=2)
    n = x.shape[0]
    k = amp * np_.exp(-0.5 * sqdist / ls ** 2) + noise * np_.eye(n)
    chol = np_.linalg.cholesky(k)
    z = solve_triangular(chol, y - mean, lower=True)
    return 0.5 * z @ z + np_.sum(np_.log(np_.diagonal(chol, 0, -1, -2))) + 0.5 * n * np.log(2 * np.pi)


def gp_numpy_value_and_grad(params, x, y):
    """``gp_nll`` and its gradient by hand: dNLL/dK = (K^-1 - a a^T) / 2, a = K^-1 r."""
    amp, ls, noise, mean = np.exp(params[0]), np.exp(params[1]), np.exp(params[2]), params[3]
    sqdist = np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=2)
    n = x.shape[0]
    e = amp * np.exp(-0.5 * sqdist / ls ** 2)
    k = e + noise * np.eye(n)
    r = y - mean
    kinv = np.linalg.inv(k)
    a = kinv @ r
    value = 0.5 * r @ a + 0.5 * np.linalg.slogdet(k)[1] + 0.5 * n * np.log(2 * np.pi)
    w = 0.5 * (kinv - np.outer(a, a))
    return value, np.array([np.sum(w * e), np.sum(w * e * sqdist) / ls ** 2, noise * np.trace(w), -np.sum(a)])


def gp_rows():
    for d in (1, 2):
        x = rng.normal(size=(30, d))
        y = np.sin(3 * x[:, 0]) + 0.1 * rng.normal(size=30)
        params = np.array([0.1, -0.3, -2.0, 0.05])
        vg = fg.value_and_grad(lambda p: gp_nll(fnp, p, x, y))  # noqa: B023
        (v1, g1), (v2, g2) = vg(params), gp_numpy_value_and_grad(params, x, y)
        assert np.allclose(v1, v2) and np.allclose(g1, g2), (g1, g2)
        contenders = [("numpy hand-written", lambda: gp_numpy_value_and_grad(params, x, y)),  # noqa: B023
                      ("funcgrad value_and_grad (eager)", lambda: vg(params))]  # noqa: B023
        if autograd is not None:
            avg = autograd.value_and_grad(lambda p: gp_nll(anp, p, x, y))  # noqa: B023
            assert np.allclose(avg(params)[1], g2)
            contenders.append(("autograd value_and_grad", lambda: avg(params)))  # noqa: B023
        _report(f"GP negative log marginal likelihood, 30 points, X 30 x {d} (solve + slogdet): value_and_grad",
                interleaved_times(contenders), "numpy hand-written")
    # The same likelihood by Cholesky (X 30 x 1)
    from funcgrad.scipy.linalg import solve_triangular

    vg = fg.value_and_grad(lambda p: gp_nll_cholesky(fnp, solve_triangular, p, x, y))
    v1, g1 = vg(params)
    v2, g2 = gp_numpy_value_and_grad(params, x, y)
    assert np.allclose(v1, v2) and np.allclose(g1, g2), (g1, g2)
    contenders = [("numpy hand-written", lambda: gp_numpy_value_and_grad(params, x, y)),
                  ("funcgrad value_and_grad (eager)", lambda: vg(params))]
    if autograd is not None:
        from autograd.scipy.linalg import solve_triangular as ag_solve_triangular

        avg = autograd.value_and_grad(lambda p: gp_nll_cholesky(anp, ag_solve_triangular, p, x, y))
        assert np.allclose(avg(params)[1], g2)
        contenders.append(("autograd value_and_grad", lambda: avg(params)))
    _report(f"GP negative log marginal likelihood, 30 points, X 30 x {d} (cholesky + solve_triangular): "
            "value_and_grad", interleaved_times(contenders), "numpy hand-written")


def lotka_volterra(np_):
    def f(state, t, params):
        prey, predator = state[0], state[1]
        a, b, c, d = params[0], params[1], params[2], params[3]
        return np_.array([a * prey - b * prey * predator, d * prey * predator - c * predator])
    return f


def ode_rows():
    from funcgrad.experimental.ode import odeint

    params, y0, ts = np.array([1.0, 0.4, 1.5, 0.3]), np.array([6.0, 3.0]), np.linspace(0.0, 2.0, 20)
    lv = lotka_volterra(fnp)
    forward = lambda: odeint(lv, y0, ts, params, rtol=1e-8, atol=1e-8)  # noqa: E731
    grad = fg.grad(lambda p: odeint(lv, y0, ts, p, rtol=1e-8, atol=1e-8)[-1, 0])
    h = 1e-6
    fd = [(odeint(lv, y0, ts, params + h * e, rtol=1e-10, atol=1e-10)[-1, 0]
           - odeint(lv, y0, ts, params - h * e, rtol=1e-10, atol=1e-10)[-1, 0]) / (2 * h) for e in np.eye(4)]
    assert np.allclose(grad(params), fd, rtol=1e-5, atol=1e-7), (grad(params), fd)
    contenders = [("funcgrad odeint (eager forward)", forward), ("funcgrad grad(odeint) (eager)", lambda: grad(params))]
    if autograd is not None:
        from autograd.builtins import tuple as ag_tuple
        from autograd.scipy.integrate import odeint as ag_odeint

        alv = lotka_volterra(anp)
        ag_grad = autograd.grad(lambda p: ag_odeint(alv, y0, ts, ag_tuple((p,)), rtol=1e-8, atol=1e-8)[-1, 0])
        assert np.allclose(ag_grad(params), fd, rtol=1e-4, atol=1e-6), (ag_grad(params), fd)
        contenders.append(("autograd grad(odeint) (LSODA)", lambda: ag_grad(params)))
    table("Lotka-Volterra, t in [0, 2], 20 outputs, rtol = atol = 1e-8: eager odeint and its gradient",
          [(name, statistics.median(ts_)) for name, ts_ in interleaved_times(contenders, rounds=5, min_time=0.2).items()],
          "funcgrad odeint (eager forward)")


def _report(title, samples, baseline):
    """Print medians of interleaved ``samples`` {name: [seconds per round]}, ratios to the
    baseline, and funcgrad / autograd as the median of per-round ratios."""
    table(title, [(name, statistics.median(ts)) for name, ts in samples.items()], baseline)
    names = list(samples)
    if len(names) == 3:  # baseline, funcgrad, autograd
        ratios = [f / a for f, a in zip(samples[names[1]], samples[names[2]])]
        print(f"  funcgrad / autograd (median of per-round ratios): {statistics.median(ratios):.2f}")


def _mlp_contender(lib):
    if lib == "funcgrad":
        vg = fg.value_and_grad(lambda p: mlp_loss(fnp, p, X, Y))
        (l1, g1), (l2, g2) = vg(PARAMS), mlp_numpy_value_and_grad(PARAMS, X, Y)
        assert np.allclose(l1, l2) and all(np.allclose(a, b) for a, b in zip(g1, g2))
        return "funcgrad value_and_grad (eager)", lambda: vg(PARAMS)
    avg = autograd.value_and_grad(lambda p: mlp_loss(anp, p, X, Y))
    return "autograd value_and_grad", lambda: avg(PARAMS)


def mlp_in_this_process(lib):
    """Time one library's MLP against the NumPy baseline, interleaved; print the samples."""
    samples = interleaved_times([("numpy hand-written", lambda: mlp_numpy_value_and_grad(PARAMS, X, Y)),
                                 _mlp_contender(lib)])
    print(json.dumps(samples))


def main():
    # The MLP allocates ~0.25-1.6 MB arrays on every call. Which of them glibc serves
    # from the heap or from fresh mmap pages, and whether it trims the heap between
    # calls, depends on what earlier allocations set its thresholds to -- so one
    # library's pattern changes the others' page faults (by up to 2x on autograd). Each
    # library is therefore timed in a process of its own, against NumPy in that process;
    # funcgrad / autograd is the ratio of those two ratios.
    libs = ["funcgrad"] + (["autograd"] if autograd is not None else [])
    runs = {}
    for lib in libs:
        out = subprocess.run([sys.executable, __file__, "--mlp", lib], check=True, capture_output=True, text=True)
        runs[lib] = json.loads(out.stdout.strip().splitlines()[-1])
    title = "MLP 784-256-10 tanh, softmax CE, batch 128: value_and_grad (one process per library)"
    print(f"\n{title}")
    rel = {}
    for lib, samples in runs.items():
        (base_name, base), (name, ts) = samples.items()
        rel[lib] = statistics.median([t / b for t, b in zip(ts, base)])
        print(f"  {base_name:34s} {fmt(statistics.median(base))}   (the {lib} process)")
        print(f"  {name:34s} {fmt(statistics.median(ts))}   {rel[lib]:6.2f}x {base_name} (median of per-round ratios)")
    if len(rel) == 2:
        print(f"  funcgrad / autograd (ratio of the ratios): {rel['funcgrad'] / rel['autograd']:.2f}")

    xs, w = rng.normal(size=(1000, 100)), rng.normal(size=100)
    ys = xs @ rng.normal(size=100)
    loss = lambda np_: (lambda w, x, y: (x @ w - y) ** 2)  # noqa: E731
    g = fg.grad(loss(fnp))
    assert np.allclose(g(w, xs[0], ys[0]), per_example_numpy(w, xs[:1], ys[:1])[0])
    contenders = [("numpy loop, hand-written grad", lambda: per_example_numpy(w, xs, ys)),
                  ("funcgrad loop of grad (eager)", lambda: [g(w, x, y) for x, y in zip(xs, ys)])]
    if autograd is not None:
        ag = autograd.grad(loss(anp))
        contenders.append(("autograd loop of grad", lambda: [ag(w, x, y) for x, y in zip(xs, ys)]))
    _report("Per-example gradients, linear regression 1000 x 100 (Python loop, one process)",
            interleaved_times(contenders), "numpy loop, hand-written grad")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--mlp"]:
        mlp_in_this_process(sys.argv[2])
    elif sys.argv[1:2] == ["--gp"]:
        gp_rows()
    elif sys.argv[1:2] == ["--ode"]:
        ode_rows()
    else:
        main()
        gp_rows()
        ode_rows()
