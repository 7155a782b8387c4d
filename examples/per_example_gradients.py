"""Per-example gradients with ``vmap(grad(...))``, as differentially private SGD needs them.

    python examples/per_example_gradients.py [--quick]

A logistic-regression loss is written for ONE example; ``vmap`` turns its gradient into
the matrix of every example's gradient in one batched program (no Python loop), which is
checked against a loop. Each row is clipped to norm 1 before averaging, then Gaussian
noise is added: DP-SGD's update.
"""
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random

from _plot import QUICK, figure, save


def example_loss(w, x, y):
    z = x @ w
    return fnp.logaddexp(0.0, z) - y * z


per_example_grads = fg.jit(fg.vmap(fg.grad(example_loss), in_axes=(None, 0, 0)))


@fg.jit
def private_step(w, x, y, key, lr=0.5, clip=1.0, noise=0.5):
    g = per_example_grads(w, x, y)
    norms = fnp.linalg.norm(g, axis=1, keepdims=True)
    g = g / fnp.maximum(1.0, norms / clip)
    noisy = fnp.sum(g, 0) + noise * clip * random.normal(key, w.shape)
    return w - lr * noisy / x.shape[0]


def main():
    rng = np.random.default_rng(2)
    n, d = (256, 10) if QUICK else (4096, 20)
    w_true = rng.normal(size=d)
    x = rng.normal(size=(n, d))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-x @ w_true))).astype(np.float64)
    w = np.zeros(d)
    g = per_example_grads(w, x, y)
    loop = np.stack([fg.grad(example_loss)(w, x[i], y[i]) for i in range(8)])
    assert np.allclose(g[:8], loop, rtol=1e-12, atol=1e-14)
    print(f"per-example gradients: {g.shape}, first 8 rows equal a Python loop's")
    losses = []
    for key in random.split(random.key(0), 100 if QUICK else 500):
        w = private_step(w, x, y, key)
        losses.append(float(fnp.mean(example_loss(w, x, y))))
    print(f"mean loss {losses[0]:.4f} -> {losses[-1]:.4f}; cosine(w, w_true) = "
          f"{float(w @ w_true / np.linalg.norm(w) / np.linalg.norm(w_true)):.3f}")
    assert losses[-1] < losses[0]
    fig, ax = figure()
    if fig is not None:
        ax.plot(losses)
        ax.set(xlabel="DP-SGD step", ylabel="mean logistic loss", title="Clipped per-example gradients")
    save(fig, "per_example_gradients")


if __name__ == "__main__":
    main()
