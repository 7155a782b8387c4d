"""Reverse mode under jit linearizes only the live primal work (``transforms/ad_prune.py``):
the program is the direct linearization's minus its dead equations, values are bitwise
equal, source lines are kept, and make_jaxpr still shows everything traced."""
import inspect

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core.staging import trace_to_jaxpr
from funcgrad.core.trace import get_aval_any
from funcgrad.test_util import check_grads
from funcgrad.transforms import ad_prune
from funcgrad.transforms.jaxpr_ad import dce_jaxpr


def candidates(x):
    y = x
    for i in range(6):  # five candidates per step, one kept (bench W10's shape)
        y = [fnp.sin(y), y * 1.5 + 0.1, fnp.tanh(y), y - 0.5 * y * y, fnp.exp(-y * y)][i % 5]
    return fnp.sum(y)


@pytest.fixture
def direct():
    """Run the body with the direct linearization (the route before pruning)."""
    ad_prune.ENABLED[0] = False
    yield
    ad_prune.ENABLED[0] = True


def _staged(fn, x):
    jaxpr, _ = trace_to_jaxpr(lambda v: [fn(v)], [get_aval_any(x)])
    return jaxpr


def test_same_program_minus_dead_equations():
    x = np.linspace(-1, 1, 5)
    g = fg.grad(candidates)
    pruned = _staged(g, x)
    ad_prune.ENABLED[0] = False
    try:
        full = _staged(g, x)
    finally:
        ad_prune.ENABLED[0] = True
    assert len(pruned.eqns) < len(full.eqns)
    assert str(dce_jaxpr(pruned)[0]) == str(dce_jaxpr(full)[0])


def test_values_bitwise_and_against_finite_differences(direct):
    x = np.linspace(-1, 1, 7)
    want = fg.jit(fg.grad(candidates))(x)  # direct route (fixture)
    ad_prune.ENABLED[0] = True
    got = fg.jit(fg.grad(candidates))(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    check_grads(fg.jit(candidates), (x,), order=1, modes=("rev",))
    v, gr = fg.jit(fg.value_and_grad(candidates))(x)
    np.testing.assert_array_equal(gr, want)
    np.testing.assert_allclose(v, candidates(x), rtol=1e-14)


def test_second_order_and_vjp_under_jit():
    x = np.linspace(-0.5, 0.5, 4)
    h = fg.jit(fg.hessian(lambda v: fnp.sum(fnp.sin(v) * v)))(x)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(x) - x * np.sin(x)), rtol=1e-12, atol=1e-14)
    out, vjp = fg.vjp(fg.jit(lambda v: fnp.tanh(v) * 2.0), x)
    np.testing.assert_allclose(vjp(np.ones(4))[0], 2 / np.cosh(x) ** 2, rtol=1e-12)
    g = fg.jit(lambda v: fg.vjp(lambda u: fnp.exp(u) + (fnp.cos(u), u)[1], v)[1](np.ones(4))[0])
    np.testing.assert_allclose(g(x), np.exp(x) + 1, rtol=1e-14)


def _lines(x):
    a = fnp.sin(x)  # line +1
    unused = fnp.arctan(x) * 3.0  # line +2: dead
    del unused
    return fnp.sum(a * a)  # line +4


def _line_table(jaxpr):
    return [(e.primitive.name, getattr(e.source_info, "filename", None), getattr(e.source_info, "lineno", None))
            for e in dce_jaxpr(jaxpr)[0].eqns]


def test_source_lines_of_the_staged_equations():
    first = inspect.getsourcelines(_lines)[1]
    jaxpr = _staged(fg.grad(_lines), np.ones(3))
    ad_prune.ENABLED[0] = False
    try:
        full = _staged(fg.grad(_lines), np.ones(3))
    finally:
        ad_prune.ENABLED[0] = True
    assert _line_table(jaxpr) == _line_table(full)  # every live equation at the same line
    rel = {e.source_info.lineno - first for e in jaxpr.eqns if e.source_info is not None
           and e.source_info.filename == __file__ and e.source_info.name == "_lines"}
    assert rel == {1, 4}  # the primal and its residuals at the user's lines; line 2 dropped
    assert "atan" not in [e.primitive.name for e in jaxpr.eqns]


def test_make_jaxpr_keeps_dead_primal_work():
    names = [e.primitive.name for e in fg.make_jaxpr(fg.grad(_lines))(np.ones(3)).jaxpr.eqns]
    assert "atan" in names


def test_errors_name_the_users_line():
    def bad(x):
        return fnp.sum(fnp.add(x, np.ones(4)))  # shapes disagree

    with pytest.raises(ValueError, match=r"add: .*\(3,\) \(4,\)"):
        fg.jit(fg.grad(bad))(np.ones(3))


def test_concrete_primal_keeps_python_control_flow():
    def f(v):
        return fnp.sin(v) if float(v) > 0 else fnp.cos(v)  # reads the concrete primal

    g = fg.jit(lambda y: fg.grad(f)(np.float64(0.3)) * y)
    np.testing.assert_allclose(g(2.0), 2 * np.cos(0.3), rtol=1e-14)


def test_effects_kept_once_and_custom_rules_used(capsys):
    @fg.custom_jvp
    def twice(v):
        return fnp.sin(v)

    twice.defjvp(lambda primals, tangents: (fnp.sin(primals[0]), 2.0 * tangents[0]))

    def f(v):
        fg.debug.print("v={v}", v=v)
        dead = fnp.exp(v)  # noqa: F841
        return twice(v) * 1.0

    out = fg.jit(fg.grad(f))(0.5)
    assert out == 2.0
    assert capsys.readouterr().out.strip() == "v=0.5"
