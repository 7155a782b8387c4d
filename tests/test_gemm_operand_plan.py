"""Planning of gemm operands (``compiler._packed_for_gemm``, ``dot.gemm_reads_in_place``):
a fused value that a BLAS product would pack anyway gets a buffer of its own, so its
other readers (a bias gradient's column sum, a second product) share one computation
instead of recomputing it; values the product reads where they lie are left alone."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import ad_util
from funcgrad.lowering import compiler
from funcgrad.lowering import dot as ldot
from tests.harness import assert_same

from harness import mlp_loss

RNG = np.random.default_rng(17)
BLAS = ldot.find_blas() is not None and ldot.USE_BLAS


def _plan(f, *args):
    closed = fg.make_jaxpr(f)(*args)
    jaxpr = compiler.simplify(closed.jaxpr, closed.consts)
    return jaxpr, compiler.plan(jaxpr)


def _materialized_prims(jaxpr, p):
    """Names of the view primitives whose results got a buffer."""
    return sorted(e.primitive.name for e in jaxpr.eqns
                  if e.primitive in compiler.VIEW_PRIMS and id(e.outputs[0]) in p.materialized)


def _mlp_args(dtype, batch=16, n_in=40, hidden=24, n_out=5):
    params = tuple(RNG.normal(size=s).astype(dtype) * 0.3 for s in ((n_in, hidden), (hidden,), (hidden, n_out), (n_out,)))
    x = RNG.normal(size=(batch, n_in)).astype(dtype)
    y = np.eye(n_out, dtype=dtype)[RNG.integers(0, n_out, batch)]
    return params, x, y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mlp_value_and_grad_jit_matches_eager(dtype):
    params, x, y = _mlp_args(dtype)
    vg = fg.value_and_grad(mlp_loss)
    want = vg(params, x, y)
    got = fg.jit(vg)(params, x, y)
    rtol = 1e-12 if dtype == np.float64 else 2e-5
    assert_same(got[0], want[0], rtol=rtol, what="loss")
    assert_same(got[1], want[1], rtol=rtol, atol=rtol, what="grads")


@pytest.mark.skipif(not BLAS, reason="no BLAS: products run generated kernels")
def test_mlp_backward_operands_computed_once():
    # The output-layer gradient (read by the bias sum and two products) and the hidden
    # gradient (read by the bias sum and the weight product) each get one buffer.
    params, x, y = _mlp_args(np.float64)
    jaxpr, p = _plan(fg.value_and_grad(mlp_loss), params, x, y)
    assert _materialized_prims(jaxpr, p).count("add") >= 1
    assert "mul" in _materialized_prims(jaxpr, p)
    text = compiler.fusion_text(jaxpr, p)
    # each product now reads a buffer: its nest has no fused equations listed under it
    for block in text.split("nest ")[1:]:
        if block.split(":")[1].strip().startswith("dot_general"):
            assert sum(line.startswith("    ") for line in block.splitlines()) == 1, block


@pytest.mark.skipif(not BLAS, reason="no BLAS: products run generated kernels")
def test_shared_fused_operand_gets_one_buffer_and_right_values():
    a, b, x = RNG.normal(size=(30, 20)), RNG.normal(size=(30, 20)), RNG.normal(size=(30, 25))

    def f(a, b, x):
        g = a * (1.0 - b * b)
        return fnp.sum(g, axis=0), x.T @ g

    jaxpr, p = _plan(f, a, b, x)
    assert _materialized_prims(jaxpr, p) == ["mul"]
    g = a * (1.0 - b * b)
    assert_same(fg.jit(f)(a, b, x), (g.sum(0), x.T @ g), rtol=1e-13)


@pytest.mark.skipif(not BLAS, reason="no BLAS: products run generated kernels")
def test_operands_read_in_place_are_not_copied():
    x, w = RNG.normal(size=(30, 20)), RNG.normal(size=(20, 25))
    # an identity transpose / broadcast is its operand itself: no buffer
    same = [lambda x, w: lax.transpose(x, (0, 1)) @ w,
            lambda x, w: lax.broadcast_in_dim(x, (30, 20), (0, 1)) @ w]
    for f in same:
        jaxpr, p = _plan(f, x, w)
        assert _materialized_prims(jaxpr, p) == []
        assert_same(fg.jit(f)(x, w), x @ w, rtol=1e-13)


def test_permuted_and_small_operands_stay_fused():
    # Batch dims not leading: the gemm packs a permuted copy anyway, so no extra buffer.
    x, y = RNG.normal(size=(4, 6, 3)), RNG.normal(size=(6, 2, 3))
    dims = (((1,), (0,)), ((2,), (2,)))
    f = lambda x, y: lax.dot_general(x * 2.0, y, dims)  # noqa: E731
    jaxpr, p = _plan(f, x, y)
    assert _materialized_prims(jaxpr, p) == []
    assert_same(fg.jit(f)(x, y), lax.dot_general(x * 2.0, y, dims), rtol=1e-13)
    # A product small enough for the generated kernel: no gemm, nothing to pack.
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    jaxpr, p = _plan(lambda a, b: (a * 2.0) @ b, a, b)
    assert _materialized_prims(jaxpr, p) == []


def test_no_blas_plans_no_gemm_buffers(monkeypatch):
    monkeypatch.setattr(ldot, "USE_BLAS", False)
    a, b, x = RNG.normal(size=(30, 20)), RNG.normal(size=(30, 20)), RNG.normal(size=(30, 25))
    jaxpr, p = _plan(lambda a, b, x: x.T @ (a * b), a, b, x)
    assert _materialized_prims(jaxpr, p) == []


def _prims(f, *args):
    closed = fg.make_jaxpr(f)(*args)
    return [e.primitive.name for e in compiler.simplify(closed.jaxpr, closed.consts).eqns]


def test_transposed_operands_fold_into_the_product():
    x, g, w = RNG.normal(size=(30, 25)), RNG.normal(size=(30, 20)), RNG.normal(size=(20, 25))
    cases = [(lambda x, g: x.T @ g, x.T @ g, (x, g)),
             (lambda g, w: g @ w.T.T, g @ w, (g, w)),
             (lambda x, w: (x @ w.T) * 2.0, (x @ w.T) * 2.0, (x, w)),
             (lambda x, g: (x.T @ g, x.T * 1.5), (x.T @ g, x.T * 1.5), (x, g))]
    for f, want, args in cases:
        names = _prims(f, *args)
        assert names.count("transpose") == (1 if isinstance(want, tuple) else 0), names
        assert_same(fg.jit(f)(*args), want, rtol=1e-13)
    # batched: the transposed operand's free dims keep their order -> folded
    a, b = RNG.normal(size=(5, 3, 4)), RNG.normal(size=(3, 5, 2))
    f = lambda a, b: lax.dot_general(lax.transpose(a, (1, 0, 2)), b, (((1,), (1,)), ((0,), (0,))))  # noqa: E731
    assert "transpose" not in _prims(f, a, b)
    assert_same(fg.jit(f)(a, b), np.einsum("bki,bkj->bij", a.transpose(1, 0, 2), b), rtol=1e-13)


def test_transpose_reordering_free_dims_is_kept():
    # Folding would reorder the result's dims: the transpose stays, values unchanged.
    a, b = RNG.normal(size=(3, 4, 5)), RNG.normal(size=(5, 2))
    f = lambda a, b: lax.dot_general(lax.transpose(a, (1, 0, 2)), b, (((2,), (0,)), ((), ())))  # noqa: E731
    assert "transpose" in _prims(f, a, b)
    assert_same(fg.jit(f)(a, b), a.transpose(1, 0, 2) @ b, rtol=1e-13)


@pytest.mark.skipif(not BLAS, reason="no BLAS: products run generated kernels")
def test_gemm_operand_buffer_is_written_on_the_calling_thread():
    # (as the gemm's own packing was: a cheap map of 32768 elements is not worth the pool)
    a, b, x = RNG.normal(size=(128, 256)), RNG.normal(size=(128, 256)), RNG.normal(size=(128, 8))

    def f(a, b, x):
        g = a * (1.0 - b * b)
        return fnp.sum(g, axis=0), x.T @ g

    assert "fg_par_run" not in fg.jit(f).lower(a, b, x).as_text()
    g = a * (1.0 - b * b)
    assert_same(fg.jit(f)(a, b, x), (g.sum(0), x.T @ g), rtol=1e-12)


def test_identity_constant_rule_still_applies_to_a_transposed_operand():
    eye, y = ad_util.mark_transform_basis(np.eye(5)), RNG.normal(size=(5, 3))  # (a jacfwd basis)
    f = lambda y: lax.dot_general(y.T, eye, (((1,), (0,)), ((), ())))  # noqa: E731  (y.T @ I)
    assert "dot_general" not in _prims(f, y)
    assert_same(fg.jit(f)(y), y.T @ eye, rtol=0)
