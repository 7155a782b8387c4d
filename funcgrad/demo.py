"""A short tour: ``python -m funcgrad.demo``.

Shows the same NumPy-style function run eagerly (plain NumPy arrays out), traced into
funcgrad's typed IR, differentiated, batched with vmap, through control flow, and
compiled with jit.
"""
from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax


def gaussian_log_likelihood(mu, log_sigma, x):
    """Log-likelihood of samples ``x`` under N(mu, exp(log_sigma)^2)."""
    sigma = fnp.exp(log_sigma)
    z = (x - mu) / sigma
    return fnp.sum(-0.5 * z**2 - log_sigma - 0.5 * fnp.log(2 * fnp.pi))


def main() -> None:
    x = np.array([0.3, -1.2, 0.8, 2.0])
    print("funcgrad", fg.__version__, "- the same code, eager and staged\n")

    print("1. Eager: funcgrad.numpy computes on NumPy arrays and returns NumPy values")
    y = fnp.tanh(x) * 2.0 + fnp.linspace(0.0, 1.0, 4)
    print(f"   fnp.tanh(x) * 2.0 + fnp.linspace(0, 1, 4) = {y}  ({type(y).__name__}, {y.dtype})")
    ll = gaussian_log_likelihood(0.5, np.log(1.5), x)
    print(f"   gaussian_log_likelihood(0.5, log 1.5, x) = {ll!r}\n")

    print("2. Staged: make_jaxpr traces the same function into the typed IR")
    closed = fg.make_jaxpr(gaussian_log_likelihood)(0.5, np.log(1.5), x)
    print("   " + str(closed).replace("\n", "\n   "))
    print()

    print("3. The IR runs too, and gives the eager answer")
    (val,) = fg.eval_closed_jaxpr(closed, 0.5, np.log(1.5), x)
    print(f"   eval_jaxpr(...) = {val!r}  (eager: {ll!r})")
    print()

    print("4. Exact derivatives: grad, and grad of grad, of the same function")
    d_mu = fg.grad(gaussian_log_likelihood)(0.5, np.log(1.5), x)
    d2_mu = fg.grad(fg.grad(gaussian_log_likelihood))(0.5, np.log(1.5), x)
    print(f"   d/dmu  log-likelihood = {d_mu!r}   (analytic: {np.sum(x - 0.5) / 1.5**2!r})")
    print(f"   d2/dmu2 log-likelihood = {d2_mu!r}   (analytic: {-len(x) / 1.5**2!r})")
    print("   make_jaxpr(grad(f)) is the gradient program itself:")
    text = str(fg.make_jaxpr(fg.grad(lambda m: fnp.sum(fnp.tanh(m * x))))(0.5))
    print("   " + text.replace("\n", "\n   "))
    print()

    print("5. vmap: per-example gradients as one batched program (no Python loop)")
    w = np.array([0.5, -1.0])
    X = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    y = np.array([1.0, 0.0, 2.0])
    loss = lambda w, xi, yi: (fnp.dot(xi, w) - yi) ** 2  # noqa: E731
    per_example = fg.vmap(fg.grad(loss), in_axes=(None, 0, 0))
    print("   vmap(grad(loss))(w, X, y) =\n  ", str(per_example(w, X, y)).replace("\n", "\n   "))
    print()

    print("6. Control flow through every transform; reverse mode through a while_loop whose")
    print("   trip count is only known at run time (JAX cannot do this)")

    def newton_sqrt(a):
        return lax.while_loop(lambda x: fnp.abs(x * x - a) > 1e-12 * a, lambda x: 0.5 * (x + a / x), a)

    grad_prog = fg.make_jaxpr(fg.grad(newton_sqrt))(2.0)  # staged once...
    for a in (2.0, 9.0, 1e6):  # ...run with different trip counts
        (g,) = fg.eval_closed_jaxpr(grad_prog, a)
        print(f"   d/da sqrt(a) at a={a:g}: {float(g):.12f}  (exact {0.5 / np.sqrt(a):.12f})")
    print()

    print("7. jit: the same code compiled to native code (fused loops, no temporaries)")
    import time

    def chain(m, x, y):
        return m.sin(x) * y + m.exp(-x * x) * 0.5 - m.tanh(y)

    xs, ys = np.linspace(-3, 3, 1_000_000), np.linspace(0, 1, 1_000_000)
    compiled = fg.jit(lambda x, y: chain(fnp, x, y))
    t0 = time.perf_counter()
    out = compiled(xs, ys)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    compiled(xs, ys)  # the first repeat call installs the native dispatch entry
    second = time.perf_counter() - t0

    def median_ms(fn, repeats=7):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return sorted(times)[repeats // 2] * 1e3

    t_fg = median_ms(lambda: compiled(xs, ys))
    t_np = median_ms(lambda: chain(np, xs, ys))
    err = np.max(np.abs(out - chain(np, xs, ys)))
    print(f"   first call (trace + compile + run): {first * 1e3:.1f} ms, second {second * 1e3:.1f} ms;"
          f" max |jit - numpy| = {err:.1e}")
    print(f"   steady state (median of 7): {t_fg:.2f} ms vs NumPy {t_np:.2f} ms on 1e6 elements")
    print("   grad, vmap and control flow compose with jit: jit(grad(f)), vmap(jit(f)), ...")
    print()

    print("8. Python control flow on traced values is caught with a pointer to your line")
    try:
        fg.make_jaxpr(lambda v: v if v.sum() > 0 else -v)(x)
    except fg.errors.TracerBoolConversionError as e:
        print("   TracerBoolConversionError:", str(e).splitlines()[0][:100] + "...")


if __name__ == "__main__":
    main()
