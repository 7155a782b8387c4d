"""Gaussian-process regression: hyperparameters fitted by exact gradients of the marginal
likelihood.

    python examples/gaussian_process.py [--quick]

The negative log marginal likelihood of an RBF-kernel GP is written once in
``funcgrad.numpy`` (a Cholesky factorisation and two triangular solves);
``funcgrad.scipy.optimize.minimize`` (BFGS) fits its three log-hyperparameters with
``jit``-compiled gradients. The prediction and its 2-sigma band are saved as a picture.
"""
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy.linalg import cho_solve, solve_triangular
from funcgrad.scipy.optimize import minimize

from _plot import QUICK, figure, save


def rbf(xa, xb, log_length, log_amp):
    d2 = (xa[:, None] - xb[None, :]) ** 2
    return fnp.exp(2 * log_amp - 0.5 * d2 / fnp.exp(2 * log_length))


def neg_log_marginal_likelihood(theta, x, y):
    log_length, log_amp, log_noise = theta[0], theta[1], theta[2]
    k = rbf(x, x, log_length, log_amp) + (fnp.exp(2 * log_noise) + 1e-8) * fnp.eye(x.shape[0])
    chol = fnp.linalg.cholesky(k)
    alpha = cho_solve((chol, True), y)
    return 0.5 * y @ alpha + fnp.sum(fnp.log(fnp.diagonal(chol))) + 0.5 * x.shape[0] * fnp.log(2 * fnp.pi)


def predict(theta, x, y, xs):
    log_length, log_amp, log_noise = theta
    k = rbf(x, x, log_length, log_amp) + (fnp.exp(2 * log_noise) + 1e-8) * fnp.eye(x.shape[0])
    chol = fnp.linalg.cholesky(k)
    ks = rbf(x, xs, log_length, log_amp)
    mean = ks.T @ cho_solve((chol, True), y)
    v = solve_triangular(chol, ks, lower=True)
    var = fnp.exp(2 * log_amp) - fnp.sum(v * v, axis=0)
    return mean, fnp.sqrt(fnp.maximum(var, 0.0))


def main():
    rng = np.random.default_rng(1)
    n = 20 if QUICK else 60
    x = np.sort(rng.uniform(-4, 4, n))
    y = np.sin(2 * x) + 0.3 * x + rng.normal(0, 0.15, n)
    theta0 = np.zeros(3)
    nll = fg.jit(neg_log_marginal_likelihood)
    print(f"initial  -log p(y) = {float(nll(theta0, x, y)):.3f}")
    result = minimize(neg_log_marginal_likelihood, theta0, args=(x, y), method="BFGS")
    theta = np.asarray(result.x)
    print(f"fitted   -log p(y) = {float(result.fun):.3f}  after {int(result.nit)} BFGS steps")
    print("length scale %.3f, amplitude %.3f, noise %.3f" % tuple(np.exp(theta)))
    gradient = fg.jit(fg.grad(neg_log_marginal_likelihood))(theta, x, y)
    print("gradient at the optimum:", np.array2string(np.asarray(gradient), precision=2))
    assert float(result.fun) < float(nll(theta0, x, y))
    xs = np.linspace(-5, 5, 200)
    mean, sd = predict(theta, x, y, xs)
    fig, ax = figure()
    if fig is not None:
        ax.fill_between(xs, mean - 2 * sd, mean + 2 * sd, alpha=0.3, label="mean ± 2 sd")
        ax.plot(xs, mean, label="posterior mean")
        ax.plot(x, y, "k.", label="data")
        ax.set(title="GP regression, hyperparameters by BFGS", xlabel="x")
        ax.legend()
    save(fig, "gaussian_process")


if __name__ == "__main__":
    main()
