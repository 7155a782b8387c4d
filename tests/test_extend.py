"""``funcgrad.extend``: JAX's "Writing custom Jaxpr interpreters" tutorial runs with its
imports changed (``jax`` -> ``funcgrad``, ``jax.numpy`` -> ``funcgrad.numpy``, and a local
``safe_map`` for ``jax._src.util``'s): the IR's attribute names, ``Literal.val``,
``eqn.primitive is lax.exp_p``, ``primitive.bind``, and both interpreters (evaluation, and
inversion under ``jit(vmap(grad(...)))``)."""
from functools import wraps

import numpy as np
import pytest

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import grad, jit, lax, vmap
from funcgrad.extend import core


def safe_map(f, *xs):
    assert len({len(x) for x in xs}) == 1
    return list(map(f, *xs))


def examine_jaxpr(closed_jaxpr):
    """What the tutorial prints, as data: the variables and each equation's parts."""
    jaxpr = closed_jaxpr.jaxpr
    eqns = [(eqn.invars, eqn.primitive, eqn.outvars, eqn.params) for eqn in jaxpr.eqns]
    return jaxpr.invars, jaxpr.outvars, jaxpr.constvars, eqns


def test_examine_jaxpr_of_an_addition():
    def foo(x):
        return x + 1.0

    invars, outvars, constvars, eqns = examine_jaxpr(jax.make_jaxpr(foo)(np.float64(5.0)))
    assert len(invars) == 1 and constvars == [] and len(eqns) == 1
    (ins, prim, outs, params) = eqns[0]
    assert prim is lax.add_p and params == {}
    assert ins[0] is invars[0] and type(ins[1]) is core.Literal and ins[1].val == 1.0
    assert outs == outvars and isinstance(outs[0], core.Var) and outs[0].aval.shape == ()


def test_examine_jaxpr_of_a_product_and_its_params():
    def bar(w, b, x):
        return jnp.dot(w, x) + b + jnp.ones(5), x

    closed = jax.make_jaxpr(bar)(jnp.ones((5, 10)), jnp.ones(5), jnp.ones(10))
    assert isinstance(closed, core.ClosedJaxpr) and isinstance(closed.jaxpr, core.Jaxpr)
    invars, outvars, _, eqns = examine_jaxpr(closed)
    prims = [p for _, p, _, _ in eqns]
    assert prims[0] is lax.dot_general_p and eqns[0][3]["dimension_numbers"] == (((1,), (0,)), ((), ()))
    assert lax.add_p in prims and lax.broadcast_in_dim_p in prims
    assert outvars[1] is invars[2]  # x passed through
    assert [v.aval.shape for v in invars] == [(5, 10), (5,), (10,)]


def eval_jaxpr(jaxpr, consts, *args):
    env = {}

    def read(var):
        if type(var) is core.Literal:
            return var.val
        return env[var]

    def write(var, val):
        env[var] = val

    safe_map(write, jaxpr.invars, args)
    safe_map(write, jaxpr.constvars, consts)
    for eqn in jaxpr.eqns:
        invals = safe_map(read, eqn.invars)
        outvals = eqn.primitive.bind(*invals, **eqn.params)
        if not eqn.primitive.multiple_results:
            outvals = [outvals]
        safe_map(write, eqn.outvars, outvals)
    return safe_map(read, jaxpr.outvars)


def f(x):
    return jnp.exp(jnp.tanh(x))


def test_the_evaluating_interpreter_matches_numpy():
    x = np.linspace(-1.0, 1.0, 5)
    closed_jaxpr = jax.make_jaxpr(f)(jnp.ones(5))
    (out,) = eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.literals, x)
    np.testing.assert_allclose(out, np.exp(np.tanh(x)), rtol=1e-15)


def test_the_evaluating_interpreter_with_consts_and_several_outputs():
    c = np.arange(3.0)

    def g(x):
        return jnp.sin(x) * c, jnp.sum(x)

    closed = jax.make_jaxpr(g)(np.ones(3))
    assert len(closed.jaxpr.constvars) == len(closed.literals)
    x = np.array([0.5, 1.0, 2.0])
    a, s = eval_jaxpr(closed.jaxpr, closed.literals, x)
    np.testing.assert_allclose(a, np.sin(x) * c, rtol=1e-15)
    np.testing.assert_allclose(s, x.sum(), rtol=1e-15)


def test_the_evaluating_interpreter_composes_with_transforms():
    closed = jax.make_jaxpr(f)(1.0)

    def h(x):
        return eval_jaxpr(closed.jaxpr, closed.literals, x)[0]

    x = np.array([0.1, 0.4, -0.3])
    expected = (1 - np.tanh(x) ** 2) * np.exp(np.tanh(x))
    np.testing.assert_allclose(jit(vmap(grad(h)))(x), expected, rtol=1e-12)


inverse_registry = {}
inverse_registry[lax.exp_p] = jnp.log
inverse_registry[lax.tanh_p] = jnp.arctanh


def inverse(fun):
    @wraps(fun)
    def wrapped(*args, **kwargs):
        closed_jaxpr = jax.make_jaxpr(fun)(*args, **kwargs)
        out = inverse_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.literals, *args)
        return out[0]

    return wrapped


def inverse_jaxpr(jaxpr, consts, *args):
    env = {}

    def read(var):
        if type(var) is core.Literal:
            return var.val
        return env[var]

    def write(var, val):
        env[var] = val

    safe_map(write, jaxpr.outvars, args)
    safe_map(write, jaxpr.constvars, consts)
    for eqn in jaxpr.eqns[::-1]:
        invals = safe_map(read, eqn.outvars)
        if eqn.primitive not in inverse_registry:
            raise NotImplementedError(f"{eqn.primitive} does not have registered inverse.")
        outval = inverse_registry[eqn.primitive](*invals)
        safe_map(write, eqn.invars, [outval])
    return safe_map(read, jaxpr.invars)


def test_the_inverse_interpreter():
    f_inv = inverse(f)
    assert jnp.allclose(f_inv(f(1.0)), 1.0)
    staged = jax.make_jaxpr(inverse(f))(f(1.0))
    assert [e.primitive for e in staged.jaxpr.eqns] == [lax.log_p, lax.atanh_p]


def test_the_inverse_interpreter_under_jit_vmap_grad():
    y = (np.arange(5) + 1.0) / 5.0
    out = jit(vmap(grad(inverse(f))))(y)
    # d/dy arctanh(log y) = 1 / (y (1 - log(y)^2))
    np.testing.assert_allclose(out, 1 / (y * (1 - np.log(y) ** 2)), rtol=1e-12)


def test_the_inverse_interpreter_refuses_what_it_cannot_invert():
    with pytest.raises(NotImplementedError, match="sin does not have registered inverse"):
        inverse(jnp.sin)(0.5)


def test_primitive_handles_are_the_primitives_themselves():
    from funcgrad.extend.core import primitives

    assert lax.exp_p is primitives.exp_p and lax.mul_p.name == "mul"
    assert primitives.jit_p is primitives.jit_call_p and primitives.remat_p is primitives.checkpoint_call_p
    closed = jax.make_jaxpr(lambda x: jit(jnp.sin)(x) * 2.0)(1.0)
    call = closed.jaxpr.eqns[0]
    assert call.primitive is primitives.jit_p and call.primitive.multiple_results
    inner = core.jaxprs_in_params(call.params)
    assert [e.primitive for e in inner[0].eqns] == [lax.sin_p]
    assert list(core.subjaxprs(closed.jaxpr)) == inner


@pytest.fixture
def cube_p():
    """A primitive declared by a test, removed again (the rule-coverage test lists them all)."""
    from funcgrad.core.primitive import PRIMITIVES, RULE_TABLES

    prim = core.Primitive("test_extend_cube")
    yield prim
    del PRIMITIVES[prim.name]
    for table in RULE_TABLES.values():
        table.pop(prim, None)


def test_a_new_primitive_through_extend(cube_p):
    cube_p.def_impl(lambda x: np.asarray(x) ** 3)
    cube_p.def_abstract_eval(lambda aval: aval)
    np.testing.assert_allclose(cube_p.bind(np.array([1.0, 2.0])), [1.0, 8.0])
    closed = jax.make_jaxpr(lambda x: cube_p.bind(x))(np.ones(2))
    assert closed.jaxpr.eqns[0].primitive is cube_p
    core.check_jaxpr(closed)
    (out,) = core.jaxpr_as_fun(closed)(np.array([3.0, 4.0]))
    np.testing.assert_allclose(out, [27.0, 64.0])


def test_building_a_jaxpr_by_hand():
    aval = core.ShapedArray((3,), np.float64)
    x = core.gensym()(aval)
    y = core.Var(aval)
    eqn = core.new_jaxpr_eqn([x, core.Literal(2.0, core.ShapedArray((), np.float64))], [y], lax.mul_p, {})
    assert eqn.invars[0] is x and eqn.outvars == [y] and eqn.primitive is lax.mul_p
    jaxpr = core.Jaxpr([], [x], [], [y])
    with pytest.raises(core.JaxprTypeError):
        core.check_jaxpr(jaxpr)  # y is never bound


def test_aval_helpers():
    aval = core.ShapedArray((4, 3), np.float32)
    assert core.mapped_aval(4, 0, aval).shape == (3,)
    assert core.unmapped_aval(5, 1, aval).shape == (4, 5, 3)
    assert core.primal_dtype_to_tangent_dtype(np.float32) == np.float32
    assert core.primal_dtype_to_tangent_dtype(np.int32) == jax.float0
    assert core.valid_jaxtype(np.ones(2)) and not core.valid_jaxtype("text")
    with pytest.raises(ValueError, match="has length 4, not 2"):
        core.mapped_aval(2, 0, aval)
