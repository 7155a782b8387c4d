"""Cold first calls of three real programs, funcgrad and (optionally) JAX side by side.

    python bench/realworld_cold.py [runs] [--jax-python /work/jaxenv/bin/python] [--only NAME]

Each figure is the median over ``runs`` (default 3) new processes of the time from the
first call of ``jit(value_and_grad(loss))`` to its result (tracing, compiling, running
once), with an empty funcgrad disk cache (a fresh ``FUNCGRAD_CACHE_DIR``; JAX's
persistent cache is off by default). Wall time, and the process's CPU time (all threads:
funcgrad's and XLA's compile workers) beside it, steadier on a busy machine. The process
start and the library import are not included (printed apart).

Programs (the same code for both libraries, written against ``xnp``/``lax``):

- ``ctmc``: a 10-state continuous-time Markov chain, ``P(t) = expm(Q t)`` at six times,
  log-likelihood of observed transition counts, gradient wrt the 90 log-rates;
- ``qubits``: a 12-qubit state vector ``(2,)*12``, four layers of RY rotations on every
  qubit (einsum) and CNOTs between neighbours (einsum with a ``(2,2,2,2)`` tensor), the
  energy of a transverse-field Ising Hamiltonian, gradient wrt the 48 angles;
- ``assoc_scan``: the linear recurrence ``h_t = a_t h_{t-1} + b_t`` over 200 steps by
  ``lax.associative_scan``, loss ``sum(h**2)``, gradient wrt ``a`` and ``b``.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NAMES = ("ctmc", "qubits", "assoc_scan")


# --- the programs ---------------------------------------------------------------------------
def ctmc(xnp, lax, expm, rng):
    import numpy as np

    n, times = 10, (0.1, 0.3, 0.7, 1.5, 3.0, 6.0)
    counts = rng.integers(0, 20, size=(len(times), n, n)).astype(float)
    mask = 1.0 - np.eye(n)  # (no self-rates: the diagonal is minus each row's sum)

    def loss(log_rates):
        rates = xnp.exp(log_rates) * mask
        q = rates - xnp.diag(xnp.sum(rates, axis=1))
        total = 0.0
        for k, t in enumerate(times):
            p = expm(q * t)
            total = total + xnp.sum(counts[k] * xnp.log(xnp.maximum(p, 1e-300)))
        return -total

    return loss, (rng.normal(size=(n, n)) * 0.3 - 1.0,)


def qubits(xnp, lax, expm, rng):
    import numpy as np

    nq, layers = 12, 4
    letters = "abcdefghijkl"
    cnot = np.zeros((2, 2, 2, 2))
    for c in (0, 1):
        for t in (0, 1):
            cnot[c, t ^ c, c, t] = 1.0  # out (c, t xor c) <- in (c, t)
    zz = np.zeros((2,) * nq)
    for idx in np.ndindex(*zz.shape):
        z = 1 - 2 * np.array(idx)
        zz[idx] = np.sum(z[:-1] * z[1:])
    x_gate = np.array([[0.0, 1.0], [1.0, 0.0]])

    def one(gate, psi, q):  # gate (2, 2) on qubit q
        s = letters
        return xnp.einsum(f"z{s[q]},{s}->{s[:q]}z{s[q + 1:]}", gate, psi)

    def two(gate, psi, q):  # gate (2, 2, 2, 2) on qubits q, q + 1
        s = letters
        return xnp.einsum(f"yz{s[q]}{s[q + 1]},{s}->{s[:q]}yz{s[q + 2:]}", gate, psi)

    def loss(angles):
        psi = xnp.zeros((2,) * nq).at[(0,) * nq].set(1.0)
        for layer in range(layers):
            for q in range(nq):
                c, s = xnp.cos(angles[layer, q] / 2), xnp.sin(angles[layer, q] / 2)
                ry = xnp.stack([xnp.stack([c, -s]), xnp.stack([s, c])])
                psi = one(ry, psi, q)
            for q in range(0, nq - 1):
                psi = two(cnot, psi, q)
        energy = xnp.sum(zz * psi * psi)
        for q in range(nq):
            energy = energy + 0.5 * xnp.sum(psi * one(x_gate, psi, q))
        return energy

    return loss, (rng.uniform(0, np.pi, size=(layers, nq)),)


def assoc_scan(xnp, lax, expm, rng):
    def combine(x, y):
        (a1, b1), (a2, b2) = x, y
        return a1 * a2, a2 * b1 + b2

    def loss(a, b):
        h = lax.associative_scan(combine, (a, b))[1]
        return xnp.sum(h ** 2)

    n = 200
    return loss, (rng.uniform(0.5, 1.0, n), rng.normal(size=n))


# --- one child process: one program, one library ------------------------------------------------
def child(name: str, lib: str) -> dict:
    import numpy as np

    t0 = time.perf_counter()
    if lib == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as xnp
        from jax import lax
        from jax.scipy.linalg import expm

        jit, value_and_grad = jax.jit, jax.value_and_grad
        ready = jax.block_until_ready
    else:
        import funcgrad as fg
        import funcgrad.numpy as xnp
        from funcgrad import lax
        from funcgrad.scipy.linalg import expm

        jit, value_and_grad = fg.jit, fg.value_and_grad
        ready = lambda v: v  # noqa: E731  (results are ready when returned)
    t_import = time.perf_counter() - t0
    loss, args = globals()[name](xnp, lax, expm, np.random.default_rng(0))
    argnums = tuple(range(len(args)))
    f = jit(value_and_grad(loss, argnums=argnums))
    t1, c1 = time.perf_counter(), time.process_time()
    value, grads = ready(f(*args))
    wall, cpu = time.perf_counter() - t1, time.process_time() - c1
    return {"import": t_import, "wall": wall, "cpu": cpu, "value": float(value),
            "grad_norm": float(sum(np.sum(np.asarray(g) ** 2) for g in grads)) ** 0.5}


def run(python: str, name: str, lib: str) -> dict:
    cache = tempfile.mkdtemp(prefix="funcgrad-cold-")
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=cache, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu")
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    try:
        out = subprocess.run([python, os.path.abspath(__file__), "--child", name, lib], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError as err:
        sys.exit(f"{lib} {name} failed:\n{err.stderr[-3000:]}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv) -> None:
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1], argv[2])))
        return
    jax_python = argv[argv.index("--jax-python") + 1] if "--jax-python" in argv else None
    only = argv[argv.index("--only") + 1].split(",") if "--only" in argv else NAMES
    positional = [a for a in argv if a.isdigit()]
    runs = int(positional[0]) if positional else 3
    libs = [("funcgrad", sys.executable)] + ([("jax", jax_python)] if jax_python else [])
    print(f"{runs} new processes per cell; first call of jit(value_and_grad(loss)), empty disk cache; "
          "median wall s (median CPU s, all threads)")
    header = "| program | " + " | ".join(lib for lib, _ in libs) + " |"
    print(header + "\n|" + "---|" * (len(libs) + 1))
    for name in only:
        cells, values = [], []
        for lib, python in libs:
            res = [run(python, name, lib) for _ in range(runs)]
            wall = statistics.median(r["wall"] for r in res)
            cpu = statistics.median(r["cpu"] for r in res)
            cells.append(f"{wall:.2f} ({cpu:.2f})")
            values.append(f"{lib}: value {res[0]['value']:.10g}, |grad| {res[0]['grad_norm']:.10g}, "
                          f"import {statistics.median(r['import'] for r in res):.2f} s")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
        for v in values:
            print(f"    {v}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
