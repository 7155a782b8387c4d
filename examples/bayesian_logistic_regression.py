"""Bayesian logistic regression sampled with Hamiltonian Monte Carlo.

    python examples/bayesian_logistic_regression.py [--quick]

The log posterior is ``funcgrad.numpy`` code; its gradient drives leapfrog steps inside a
``lax.fori_loop``, the accept/reject step uses ``funcgrad.random`` keys, and the whole
transition is one ``jit``-compiled program. Four chains run side by side under ``vmap``.
"""
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax, random

from _plot import QUICK, figure, save


def log_posterior(w, x, y):
    z = x @ w
    log_likelihood = fnp.sum(y * z - fnp.logaddexp(0.0, z))
    return log_likelihood - 0.5 * fnp.sum(w * w)  # N(0, 1) prior


def hmc_step(w, key, x, y, step_size=0.05, n_leapfrog=20):
    grad_lp = fg.grad(log_posterior)
    k_momentum, k_accept = random.split(key)
    p0 = random.normal(k_momentum, w.shape)

    def leapfrog(_, state):
        q, p = state
        p = p + 0.5 * step_size * grad_lp(q, x, y)
        q = q + step_size * p
        p = p + 0.5 * step_size * grad_lp(q, x, y)
        return q, p

    q, p = lax.fori_loop(0, n_leapfrog, leapfrog, (w, p0))
    log_ratio = (log_posterior(q, x, y) - 0.5 * p @ p) - (log_posterior(w, x, y) - 0.5 * p0 @ p0)
    accept = fnp.log(random.uniform(k_accept)) < log_ratio
    return fnp.where(accept, q, w), accept


def main():
    rng = np.random.default_rng(3)
    n, d = 200, 3
    w_true = np.array([1.5, -2.0, 0.5])
    x = rng.normal(size=(n, d))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-x @ w_true))).astype(np.float64)
    chains = 4
    step = fg.jit(fg.vmap(hmc_step, in_axes=(0, 0, None, None)))
    w = np.zeros((chains, d))
    samples, accepted = [], []
    for key in random.split(random.key(0), 150 if QUICK else 1500):
        w, ok = step(w, random.split(key, chains), x, y)
        samples.append(np.asarray(w))
        accepted.append(np.asarray(ok))
    samples = np.stack(samples[len(samples) // 3:])  # drop a third as warm-up
    mean = samples.reshape(-1, d).mean(0)
    print("posterior mean", np.array2string(mean, precision=3), " true", w_true)
    print(f"acceptance rate {np.mean(accepted):.2f} over {chains} chains")
    assert np.all(np.abs(mean - w_true) < 1.0)
    fig, ax = figure()
    if fig is not None:
        for j in range(d):
            ax.hist(samples[..., j].ravel(), bins=40, alpha=0.6, label=f"w[{j}] (true {w_true[j]})")
        ax.set(title="HMC posterior samples", xlabel="weight")
        ax.legend()
    save(fig, "bayesian_logistic_regression")


if __name__ == "__main__":
    main()
