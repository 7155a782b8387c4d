"""A two-layer MLP trained on synthetic data with ``jit(value_and_grad)`` and Adam.

    python examples/mlp_synthetic.py [--quick]

The data are points in the plane labelled by which of two interleaved spirals they lie
on; the network is plain ``funcgrad.numpy`` code and its parameters a pytree (a dict).
"""
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random

from _plot import QUICK, figure, save


def spirals(n, rng):
    t = np.sqrt(rng.uniform(0, 1, n)) * 3 * np.pi
    label = rng.integers(0, 2, n)
    r = t / (3 * np.pi)
    angle = t + np.pi * label
    x = np.stack([r * np.cos(angle), r * np.sin(angle)], 1) + rng.normal(0, 0.02, (n, 2))
    return x, label.astype(np.float64)


def init(key, sizes):
    params = []
    for k, (m, n) in zip(random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append({"w": random.normal(k, (m, n)) * np.sqrt(2.0 / m), "b": fnp.zeros(n)})
    return params


def logits(params, x):
    for layer in params[:-1]:
        x = fnp.tanh(x @ layer["w"] + layer["b"])
    return (x @ params[-1]["w"] + params[-1]["b"])[:, 0]


def loss(params, x, y):
    z = logits(params, x)
    return fnp.mean(fnp.logaddexp(0.0, z) - y * z)  # binary cross-entropy


@fg.jit
def adam_step(params, m, v, t, x, y, lr=0.01, b1=0.9, b2=0.999):
    value, g = fg.value_and_grad(loss)(params, x, y)
    m = fg.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
    v = fg.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
    step = lambda p, m, v: p - lr * (m / (1 - b1**t)) / (fnp.sqrt(v / (1 - b2**t)) + 1e-8)  # noqa: E731
    return fg.tree_util.tree_map(step, params, m, v), m, v, value


def main():
    rng = np.random.default_rng(0)
    x, y = spirals(200 if QUICK else 1000, rng)
    params = init(random.key(0), [2, 32, 32, 1])
    m = fg.tree_util.tree_map(fnp.zeros_like, params)
    v = fg.tree_util.tree_map(fnp.zeros_like, params)
    steps = 300 if QUICK else 3000
    history = []
    for t in range(1, steps + 1):
        params, m, v, value = adam_step(params, m, v, float(t), x, y)
        history.append(float(value))
        if t % (steps // 5) == 0:
            print(f"step {t:5d}  loss {float(value):.4f}")
    accuracy = np.mean((np.asarray(logits(params, x)) > 0) == (y > 0.5))
    print(f"training accuracy {accuracy:.3f}")
    assert history[-1] < history[0], "the loss should go down"
    fig, ax = figure()
    if fig is not None:
        ax.semilogy(history)
        ax.set(xlabel="Adam step", ylabel="cross-entropy", title="MLP on two spirals")
    save(fig, "mlp_synthetic")


if __name__ == "__main__":
    main()
