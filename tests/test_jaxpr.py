"""Golden printouts of canonical jaxprs, the type checker, constants and evaluation."""
import textwrap

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.ir import Eqn, Jaxpr, Literal, Var
from funcgrad.core.avals import ShapedArray
from funcgrad.core.prims import elementwise as ew
from funcgrad.core.typecheck import JaxprTypeError


def golden(text):
    return textwrap.dedent(text).strip("\n")


def test_golden_scalar_chain():
    closed = fg.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(1.0)
    assert str(closed) == golden("""
        { lambda ; a:f64[]. let
            b:f64[] = sin a
            c:f64[] = mul b 2.0:f64[]
          in (c,) }
    """)


def test_golden_broadcast_and_reduce():
    closed = fg.make_jaxpr(lambda x, y: fnp.sum(x * y, axis=0))(np.ones((2, 3)), np.ones(3))
    assert str(closed) == golden("""
        { lambda ; a:f64[2,3] b:f64[3]. let
            c:f64[2,3] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(2, 3)] b
            d:f64[2,3] = mul a c
            e:f64[3] = reduce_sum[axes=(0,)] d
          in (e,) }
    """)


def test_golden_promotion_f32_with_python_scalar_and_int():
    # float32 + weak 1.0 stays float32; float32 + int32 promotes to float64 (NumPy 2).
    closed = fg.make_jaxpr(lambda x, i: x + 1.0 + i)(np.ones(2, np.float32), np.ones(2, np.int32))
    assert str(closed) == golden("""
        { lambda ; a:f32[2] b:i32[2]. let
            c:f32[2] = broadcast_in_dim[broadcast_dimensions=() shape=(2,)] 1.0:f32[]
            d:f32[2] = add a c
            e:f64[2] = convert_element_type[new_dtype=float64 weak_type=False] d
            f:f64[2] = convert_element_type[new_dtype=float64 weak_type=False] b
            g:f64[2] = add e f
          in (g,) }
    """)


def test_golden_closure_constant_is_constvar_not_literal():
    big = np.arange(1000.0)
    closed = fg.make_jaxpr(lambda x: x * big)(np.ones(1000))
    assert str(closed) == golden("""
        { lambda a:f64[1000] ; b:f64[1000]. let
            c:f64[1000] = mul b a
          in (c,) }
    """)
    assert closed.consts[0] is big


def test_golden_multiple_outputs_and_pytree():
    closed = fg.make_jaxpr(lambda d: (d["a"] - d["b"], fnp.exp(d["a"])))({"a": 1.0, "b": 2.0})
    assert str(closed) == golden("""
        { lambda ; a:f64[] b:f64[]. let
            c:f64[] = sub a b
            d:f64[] = exp a
          in (c, d) }
    """)


def test_golden_primitive_params_sorted_and_shown():
    closed = fg.make_jaxpr(lambda x: lax.transpose(lax.reshape(x, (3, 2)), (1, 0)))(np.ones(6))
    assert str(closed) == golden("""
        { lambda ; a:f64[6]. let
            b:f64[3,2] = reshape[new_sizes=(3, 2)] a
            c:f64[2,3] = transpose[permutation=(1, 0)] b
          in (c,) }
    """)


def test_printing_is_stable():
    f = lambda x: fnp.tanh(x) @ x.T  # noqa: E731
    a = str(fg.make_jaxpr(f)(np.ones((2, 2))))
    b = str(fg.make_jaxpr(f)(np.ones((2, 2))))
    assert a == b


def test_eval_matches_eager():
    def f(x, y):
        return fnp.exp(-x * x) * 0.5 - fnp.tanh(y) + fnp.sin(x) * y

    x, y = np.linspace(-1, 1, 5), np.linspace(0, 2, 5)
    closed = fg.make_jaxpr(f)(x, y)
    fg.check_jaxpr(closed)
    (out,) = fg.eval_closed_jaxpr(closed, x, y)
    np.testing.assert_allclose(out, f(x, y), rtol=1e-15)


def test_ops_on_constants_are_staged():
    closed = fg.make_jaxpr(lambda x: x + fnp.sin(2.0))(1.0)
    assert "sin 2.0:f64[]" in str(closed)


def test_weak_type_argument():
    closed = fg.make_jaxpr(lambda x: x)(1.0)
    assert closed.jaxpr.invars[0].aval.weak_type
    closed = fg.make_jaxpr(lambda x: x)(np.float64(1.0))
    assert not closed.jaxpr.invars[0].aval.weak_type


def test_static_argnums():
    closed = fg.make_jaxpr(lambda x, n: x * n, static_argnums=1)(np.ones(2), 3)
    assert len(closed.jaxpr.invars) == 1
    assert "3:i64[]" in str(closed) or "3.0:f64[]" in str(closed)


def test_shape_dtype_struct_argument():
    closed = fg.make_jaxpr(fnp.cos)(fg.ShapeDtypeStruct((2, 5), np.float32))
    assert str(closed.jaxpr.invars[0].aval) == "f32[2,5]"


# --- the type checker ------------------------------------------------------------------

def _f64(*shape):
    return ShapedArray(shape, np.float64)


def test_typecheck_rejects_wrong_output_type():
    a, b = Var(_f64(3)), Var(_f64(4))
    bad = Jaxpr([], [a], [Eqn(ew.sin_p, [a], [b], {})], [b])
    with pytest.raises(JaxprTypeError, match=r"declared f64\[4\] but the inputs give f64\[3\]"):
        fg.check_jaxpr(bad)


def test_typecheck_rejects_unbound_and_rebound_vars():
    a, b, c = Var(_f64(3)), Var(_f64(3)), Var(_f64(3))
    with pytest.raises(JaxprTypeError, match="used before it is bound"):
        fg.check_jaxpr(Jaxpr([], [a], [Eqn(ew.add_p, [a, c], [b], {})], [b]))
    with pytest.raises(JaxprTypeError, match="bound twice"):
        fg.check_jaxpr(Jaxpr([], [a], [Eqn(ew.sin_p, [a], [a], {})], [a]))


def test_typecheck_rejects_strictness_violation_with_context():
    a, b, c = Var(_f64(3)), Var(ShapedArray((3,), np.float32)), Var(_f64(3))
    with pytest.raises(JaxprTypeError, match=r"(?s)rejected by add.*>>> .* = add"):
        fg.check_jaxpr(Jaxpr([], [a, b], [Eqn(ew.add_p, [a, b], [c], {})], [c]))


def test_typecheck_rejects_nonscalar_literal():
    a, b = Var(_f64(3)), Var(_f64(3))
    lit = Literal(np.ones(3), _f64(3))
    with pytest.raises(JaxprTypeError, match="not a scalar"):
        fg.check_jaxpr(Jaxpr([], [a], [Eqn(ew.add_p, [a, lit], [b], {})], [b]))
