"""A fused value read at many positions of one loop gets a buffer (``lowering/index_paths.py``):
compiled code grows with the program, not with the product of its layout ops' fan-outs.
The linear recurrence ``h_t = a_t h_{t-1} + b_t`` by ``lax.associative_scan`` (log2(n)
levels of strided slices, interleaves and, in its gradient, pads) gave code superlinear
in n: 888, 2669, 6150, 21084 lines of LLVM IR for 8, 16, 32, 64 steps."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.ir import Var
from funcgrad.lowering import index_paths
from funcgrad.lowering.compiler import plan, simplify


def _combine(x, y):
    (a1, b1), (a2, b2) = x, y
    return a1 * a2, a2 * b1 + b2


def _states(a, b):
    return lax.associative_scan(_combine, (a, b))[1]


def _loss(a, b):
    return fnp.sum(_states(a, b) ** 2)


def _states_loop(a, b):
    h, out = 0.0, []
    for at, bt in zip(a, b):
        h = at * h + bt
        out.append(h)
    return np.array(out)


def _inputs(n):
    rng = np.random.default_rng(n)
    return rng.uniform(0.5, 1.0, n), rng.normal(size=n)


def _instructions(n) -> int:
    """Instructions of the unoptimised LLVM IR of ``jit(grad(loss))`` for ``n`` steps."""
    text = fg.jit(fg.grad(_loss, argnums=(0, 1))).lower(*_inputs(n)).as_text()
    ir = text.split("# LLVM IR (before optimisation)")[1].split("# LLVM IR (after optimisation)")[0]
    return sum(1 for line in ir.splitlines() if line.startswith("  ") and not line.lstrip().startswith(";"))


def test_grad_of_an_associative_scan_compiles_to_code_linear_in_its_steps():
    sizes = {n: _instructions(n) for n in (16, 32, 64, 128)}
    for n in (32, 64, 128):
        assert sizes[n] <= 2.5 * sizes[n // 2], sizes
    assert sizes[128] <= 4 * sizes[16], sizes  # (in fact it grows with log n: the equations)


@pytest.mark.parametrize("n", [1, 2, 7, 64, 200])
def test_the_recurrence_matches_a_numpy_loop_and_finite_differences(n):
    a, b = _inputs(n)
    np.testing.assert_allclose(fg.jit(_states)(a, b), _states_loop(a, b), rtol=1e-12, atol=1e-12)
    ga, gb = fg.jit(fg.grad(_loss, argnums=(0, 1)))(a, b)
    eps = 1e-6
    for got, k in ((ga, 0), (gb, 1)):
        want = np.empty(n)
        for i in range(n):
            step = np.zeros(n)
            step[i] = eps
            up, down = [a, b], [a, b]
            up[k], down[k] = up[k] + step, down[k] - step
            want[i] = (np.sum(_states_loop(*up) ** 2) - np.sum(_states_loop(*down) ** 2)) / (2 * eps)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _planned(f, *args):
    jaxpr = simplify(fg.make_jaxpr(f)(*args).jaxpr)
    return jaxpr, plan(jaxpr)


def _buffered(jaxpr, p, name) -> list:
    return [e.outputs[0].aval.shape for e in jaxpr.eqns
            if e.primitive.name == name and isinstance(e.outputs[0], Var) and id(e.outputs[0]) in p.materialized
            and e.outputs[0] not in jaxpr.outvars]


def test_a_value_read_at_many_positions_gets_a_buffer_and_one_read_at_few_stays_fused():
    x = np.linspace(0.1, 2.0, 40)

    def stencil(x, width):
        y = fnp.exp(x) * 2.0
        return sum(y[k:k + 30] for k in range(width))

    jaxpr, p = _planned(lambda x: stencil(x, index_paths.MAX_PATHS + 1), x)
    assert _buffered(jaxpr, p, "mul") == [(40,)]  # y, computed once
    jaxpr, p = _planned(lambda x: stencil(x, index_paths.MAX_PATHS), x)
    assert _buffered(jaxpr, p, "mul") == []  # few reads: recomputed, no buffer
    np.testing.assert_allclose(fg.jit(lambda x: stencil(x, 9))(x), stencil(np.asarray(x), 9), rtol=1e-13)


def test_slices_of_an_input_and_searches_through_gather_add_no_buffer(monkeypatch):
    x = np.linspace(0.1, 2.0, 40)
    jaxpr, p = _planned(lambda x: sum(x[k:k + 30] for k in range(9)), x)
    assert not p.offsets  # (a slice of a buffer is an address and a load)
    # a binary search reads its midpoint directly and through a gather, at one position
    search = lambda s, q: fnp.searchsorted(s, q, method="scan")  # noqa: E731
    sorted_x, queries = np.sort(np.random.default_rng(0).normal(size=300)), np.linspace(-2, 2, 50)
    jaxpr, p = _planned(search, sorted_x, queries)
    monkeypatch.setattr(index_paths, "MAX_PATHS", 10**9)
    assert len(p.materialized) == len(plan(jaxpr).materialized)
    np.testing.assert_array_equal(fg.jit(search)(sorted_x, queries), np.searchsorted(sorted_x, queries))


def test_an_operand_of_control_flow_computed_by_fused_arithmetic_gets_a_buffer():
    x = np.linspace(0.1, 2.0, 12).reshape(3, 4)

    def f(x, t):
        branch = lambda y: fnp.sin(y) @ y.T  # noqa: E731  (reads y at many positions)
        return lax.cond(t > 0.5, branch, lambda y: -branch(y), x * 0.3) + lax.cond(
            t > 0.5, branch, branch, x.reshape(4, 3).T)

    jaxpr, p = _planned(f, x, 1.0)
    assert _buffered(jaxpr, p, "mul") == [(3, 4)]  # x * 0.3: its code (and 0.3) out of the branches
    assert _buffered(jaxpr, p, "transpose") == _buffered(jaxpr, p, "reshape") == []  # moves: read in place
    want = np.sin(x * 0.3) @ (x * 0.3).T + np.sin(x.reshape(4, 3).T) @ x.reshape(4, 3)
    np.testing.assert_allclose(fg.jit(f)(x, 1.0), want, rtol=1e-13)


def test_a_transpose_of_many_small_dims_loops_once_per_run_of_dims():
    # moving one axis of a (2,)*10 state (an einsum on one qubit): the product's packing
    # and the result's transpose each loop over 3 runs of dims, not over 10 dims
    gate, psi = np.array([[0.6, -0.8], [0.8, 0.6]]), np.random.default_rng(0).normal(size=(2,) * 10)
    f = lambda g, s: fnp.einsum("zd,abcdefghij->abczefghij", g, s)  # noqa: E731
    ir = fg.jit(f).lower(gate, psi).as_text().split("# LLVM IR (after optimisation)")[0]
    assert ir.count("phi i64") <= 8
    np.testing.assert_allclose(fg.jit(f)(gate, psi), np.einsum("zd,abcdefghij->abczefghij", gate, psi), rtol=1e-14)
    x = np.random.default_rng(1).normal(size=(2, 3, 4, 5, 6))
    perm = (2, 3, 0, 1, 4)
    np.testing.assert_array_equal(fg.jit(lambda x: fnp.transpose(x, perm) * 1.0)(x), np.transpose(x, perm))
    np.testing.assert_array_equal(fg.jit(lambda x: fnp.transpose(x + 1.0, perm))(x), np.transpose(x + 1.0, perm))
