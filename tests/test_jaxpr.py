"""Golden printouts of canonical jaxprs, the type checker, constants and evaluation."""
import textwrap

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.avals import ShapedArray
from funcgrad.core.ir import Eqn, Jaxpr, Literal, Var
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
    # Python-scalar arguments are weakly typed; ``-`` on two of them stays weak as Python's
    # arithmetic does (the convert), while fnp.exp gives a strong NumPy-style result.
    closed = fg.make_jaxpr(lambda d: (d["a"] - d["b"], fnp.exp(d["a"])))({"a": 1.0, "b": 2.0})
    assert str(closed) == golden("""
        { lambda ; a:f64[] b:f64[]. let
            c:f64[] = sub a b
            d:f64[] = convert_element_type[new_dtype=float64 weak_type=True] c
            e:f64[] = exp a
          in (d, e) }
    """)


def test_golden_primitive_params_sorted_and_shown():
    closed = fg.make_jaxpr(lambda x: lax.transpose(lax.reshape(x, (3, 2)), (1, 0)))(np.ones(6))
    assert str(closed) == golden("""
        { lambda ; a:f64[6]. let
            b:f64[3,2] = reshape[new_sizes=(3, 2)] a
            c:f64[2,3] = transpose[permutation=(1, 0)] b
          in (c,) }
    """)



# --- golden printouts of transformed programs -----------------------------------------

def test_golden_grad_of_scalar_product():
    # Reverse mode = linearize (primal work and residuals first) + transpose.
    closed = fg.make_jaxpr(fg.grad(lambda x: fnp.sin(x) * x))(1.0)
    assert str(closed) == golden("""
        { lambda ; a:f64[]. let
            b:f64[] = sin a
            c:f64[] = cos a
            d:f64[] = mul b a
            e:f64[] = mul b 1.0:f64[]
            f:f64[] = mul 1.0:f64[] a
            g:f64[] = mul f c
            h:f64[] = add e g
          in (h,) }
    """)


def test_golden_grad_through_reduction():
    # The cotangent of reduce_sum is a broadcast; tanh's partial (1 - y*y) is a residual.
    closed = fg.make_jaxpr(fg.grad(lambda x, y: fnp.sum(fnp.tanh(x * y))))(np.ones(3), np.ones(3))
    assert str(closed) == golden("""
        { lambda ; a:f64[3] b:f64[3]. let
            c:f64[3] = mul a b
            d:f64[3] = tanh c
            e:f64[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 1.0:f64[]
            f:f64[3] = mul d d
            g:f64[3] = sub e f
            h:f64[] = reduce_sum[axes=(0,)] d
            i:f64[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 1.0:f64[]
            j:f64[3] = mul i g
            k:f64[3] = mul j b
          in (k,) }
    """)


def test_golden_vmap_of_dot_is_one_batched_dot_general():
    closed = fg.make_jaxpr(fg.vmap(lambda x, y: fnp.dot(x, y)))(np.ones((5, 3)), np.ones((5, 3)))
    assert str(closed) == golden("""
        { lambda ; a:f64[5,3] b:f64[5,3]. let
            c:f64[5] = dot_general[dimension_numbers=(((1,), (1,)), ((0,), (0,)))] a b
          in (c,) }
    """)


def test_golden_vmap_over_axis_1_with_reduction_and_indexing():
    f = fg.vmap(lambda x: fnp.sum(x * 2.0) + x[0], in_axes=1)
    closed = fg.make_jaxpr(f)(np.ones((3, 4)))
    assert str(closed) == golden("""
        { lambda ; a:f64[3,4]. let
            b:f64[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 2.0:f64[]
            c:f64[3,4] = broadcast_in_dim[broadcast_dimensions=(0,) shape=(3, 4)] b
            d:f64[3,4] = mul a c
            e:f64[4] = reduce_sum[axes=(0,)] d
            f:f64[1,4] = slice[limit_indices=(1, 4) start_indices=(0, 0) strides=None] a
            g:f64[4,1] = transpose[permutation=(1, 0)] f
            h:f64[4] = reshape[new_sizes=(4,)] g
            i:f64[4] = add e h
          in (i,) }
    """)


def test_golden_llvm_ir_of_a_fused_loop():
    # The unoptimised kernel is deterministic (no addresses, no host CPU features): one
    # loop whose body loads, multiplies, adds and stores -- both broadcasts fused as
    # constants. The whole unoptimised module holds no address at all (type objects and
    # constants are external globals bound at link time: the disk cache relies on it);
    # the optimised IR (vector width depends on the host CPU) is not compared textually.
    text = fg.jit(lambda x: x * 2.0 + 1.0).lower(np.zeros(4)).as_text()
    unoptimised = text.split("# LLVM IR (before optimisation)\n", 1)[1].split("# LLVM IR (after", 1)[0]
    assert "inttoptr" not in unoptimised
    core = unoptimised.split("\ndefine i32 @fg_main_entry", 1)[0]
    core = "\n".join(line for line in core.splitlines() if " = external global " not in line)
    assert core == golden("""
        define internal i32 @fg_main_core(ptr noalias nocapture %a0, ptr noalias nocapture %o0) noinline nounwind {
        entry:
          br label %start
        start:

          br label %loop1
        loop1:
          %v4 = phi i64 [0, %start], [%v11, %body2]
          %v5 = icmp slt i64 %v4, 4
          br i1 %v5, label %body2, label %done3
        body2:
          %v6 = getelementptr inbounds double, ptr %a0, i64 %v4
          %v7 = load double, ptr %v6, align 8
          %v8 = fmul double %v7, 0x4000000000000000
          %v9 = fadd double %v8, 0x3FF0000000000000
          %v10 = getelementptr inbounds double, ptr %o0, i64 %v4
          store double %v9, ptr %v10, align 8
          %v11 = add nuw nsw i64 %v4, 1
          br label %loop1
        done3:
          ret i32 0
        }
    """)
    optimised = text.split("# LLVM IR (after optimisation)\n", 1)[1]
    kernel = optimised.split("@fg_main_core(", 1)[1].split("\n}", 1)[0]
    assert "fmul" in kernel and "fadd" in kernel and "call" not in kernel

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
