"""Issue #12: the keyword arguments and calling conventions JAX users pass to the
control-flow functions are accepted with JAX's meaning (``scan(length=, reverse=,
unroll=)``, ``fori_loop(unroll=)``, ``cond``/``switch`` operands), and bad values raise
typed errors naming the function."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax


def _cumsum_scan(xs, **kw):
    return lax.scan(lambda c, x: (c + x, c * x), 0.0, xs, **kw)


@pytest.mark.parametrize("unroll", [1, 2, 3, 7, True, False])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_unroll_gives_the_same_results(unroll, reverse):
    xs = np.arange(1.0, 6.0)
    want_c, want_ys = _cumsum_scan(xs, reverse=reverse)
    for run in (lambda xs: _cumsum_scan(xs, reverse=reverse, unroll=unroll, length=5),
                fg.jit(lambda xs: _cumsum_scan(xs, reverse=reverse, unroll=unroll))):
        c, ys = run(xs)
        assert c == want_c
        np.testing.assert_array_equal(ys, want_ys)
    g = fg.grad(lambda xs: _cumsum_scan(xs, reverse=reverse, unroll=unroll)[1].sum())(xs)
    np.testing.assert_allclose(g, fg.grad(lambda xs: _cumsum_scan(xs, reverse=reverse)[1].sum())(xs))


def test_scan_length_without_xs_and_reverse_order():
    c, ys = lax.scan(lambda c, _: (c + 1, c), 0, None, length=4, reverse=True)
    assert c == 4
    np.testing.assert_array_equal(ys, [3, 2, 1, 0])


@pytest.mark.parametrize("unroll", [2, True])
def test_fori_loop_unroll(unroll):
    f = lambda x: lax.fori_loop(0, 4, lambda i, c: c * x + i, 1.0, unroll=unroll)  # noqa: E731
    want = lax.fori_loop(0, 4, lambda i, c: c * 1.5 + i, 1.0)
    assert f(1.5) == want
    assert fg.jit(f)(1.5) == want
    assert fg.grad(f)(1.5) == pytest.approx(fg.grad(lambda x: lax.fori_loop(0, 4, lambda i, c: c * x + i, 1.0))(1.5))


@pytest.mark.parametrize("call, match", [
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, np.ones(3), unroll=0), "scan: unroll"),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, np.ones(3), unroll=1.5), "scan: unroll"),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, None, length=2.5), "scan: length"),
    (lambda: lax.scan(0.0, 0.0, np.ones(3)), "scan: f must be a callable"),
    (lambda: lax.fori_loop(0, 3, lambda i, c: c, 0.0, unroll="x"), "fori_loop: unroll"),
    (lambda: lax.cond(True, lambda x: x, lambda x: x, 1.0, operand=2.0), "cond: pass operands"),
    (lambda: lax.cond(True, 1, 2), "cond: true_fun and false_fun must be callables"),
    (lambda: lax.switch(0, [lambda x: x, 3], 1.0), "switch: branches must be callables"),
])
def test_bad_keywords_raise_typed_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_fori_loop_unroll_needs_concrete_bounds():
    with pytest.raises(ValueError, match="fori_loop: unroll"):
        fg.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + 1.0, 0.0, unroll=2))(3)


@pytest.mark.parametrize("pred", [True, False])
def test_cond_operand_conventions(pred):
    ops = {"a": np.float64(2.0), "b": np.arange(3.0)}
    t = lambda o: o["a"] * o["b"]  # noqa: E731
    f = lambda o: o["b"] - o["a"]  # noqa: E731
    want = t(ops) if pred else f(ops)
    np.testing.assert_array_equal(lax.cond(pred, t, f, ops), want)  # one positional pytree
    np.testing.assert_array_equal(lax.cond(pred, t, f, operand=ops), want)  # JAX's operand= keyword
    np.testing.assert_array_equal(fg.jit(lambda p: lax.cond(p, t, f, operand=ops))(pred), want)
    # several positional operands; no operand at all
    assert lax.cond(pred, lambda x, y: x + y, lambda x, y: x - y, 3.0, 1.0) == (4.0 if pred else 2.0)
    assert lax.cond(pred, lambda: 1.0, lambda: 2.0) == (1.0 if pred else 2.0)
    # JAX's old per-branch form: cond(pred, true_operand, true_fun, false_operand, false_fun)
    assert lax.cond(pred, 1.0, lambda x: x + 1, 2.0, lambda x: x * 10) == (2.0 if pred else 20.0)
    assert fg.jit(lambda p: lax.cond(p, 1.0, lambda x: x + 1, 2.0, lambda x: x * 10))(pred) == (2.0 if pred else 20.0)


def test_switch_operand_keyword():
    branches = [lambda x: x, lambda x: -x, lambda x: 2 * x]
    for i in range(3):
        assert lax.switch(i, branches, operand=fnp.asarray(2.0)) == branches[i](2.0)
        assert fg.jit(lambda i: lax.switch(i, branches, operand=2.0))(i) == branches[i](2.0)
