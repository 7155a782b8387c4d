"""First-call work of issue #17, second round: DCE runs before the rewrites, the program
cache's fingerprint leaves dead equations out, provider calls are recorded and replayed
once, and staging shares one SourceLine per call site -- with the same lines, messages
and answers as before."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import debug, lax
from funcgrad.lowering import engine, program_cache
from funcgrad.lowering.compiler import dce, simplify
from funcgrad.lowering.inline import inline_calls


def _step_all(x):
    # Builds five candidate expressions per step and keeps one (as the W10 function does).
    y = x
    for i in range(6):
        y = [fnp.sin(y), y * 1.5 + 0.25, fnp.tanh(y), y - 0.5 * y * y, fnp.exp(-y * y)][i % 5]
    return y


def _step_live(x):
    y = x
    for i in range(6):
        y = [fnp.sin, lambda v: v * 1.5 + 0.25, fnp.tanh, lambda v: v - 0.5 * v * v,
             lambda v: fnp.exp(-v * v)][i % 5](y)
    return y


def test_dce_drops_only_dead_equations_and_keeps_effects():
    x = np.linspace(-1.0, 1.0, 8)
    closed = fg.make_jaxpr(_step_all)(x)
    live = dce(closed.jaxpr)
    assert len(live.eqns) < len(closed.jaxpr.eqns) // 2
    assert live.outvars == closed.jaxpr.outvars and live.invars == closed.jaxpr.invars
    assert dce(live) is live  # nothing left to remove: the same object
    np.testing.assert_array_equal(fg.core.eval_jaxpr(live, closed.consts, x)[0], _step_all(x))

    def noisy(v):
        debug.callback(lambda a: None, v * 3.0)  # an effect whose result nothing reads
        unused = fnp.cos(v)  # noqa: F841  (dead)
        return v + 1.0

    j = fg.make_jaxpr(noisy)(x).jaxpr
    names = [e.primitive.name for e in dce(j).eqns]
    assert "cos" not in names and "mul" in names and len(names) == len(j.eqns) - 1


def test_simplify_gives_the_same_program_with_or_without_dead_code():
    x = np.linspace(-1.0, 1.0, 8)
    a = simplify(inline_calls(fg.make_jaxpr(_step_all)(x)).jaxpr)
    b = simplify(inline_calls(fg.make_jaxpr(_step_live)(x)).jaxpr)
    assert sorted(e.primitive.name for e in a.eqns) == sorted(e.primitive.name for e in b.eqns)
    np.testing.assert_array_equal(fg.jit(_step_all)(x), fg.jit(_step_live)(x))
    g = fg.jit(fg.grad(lambda v: fnp.sum(_step_all(v))))(x)
    np.testing.assert_allclose(g, fg.grad(lambda v: fnp.sum(_step_live(v)))(x), rtol=1e-14)


def test_cse_after_dce_still_merges_and_substitutes():
    def f(v):
        a = fnp.sin(v) * 2.0
        b = fnp.sin(v) * 2.0  # the same expression: merged
        return a + b, fnp.cos(v) - fnp.cos(v)

    x = np.linspace(0.0, 1.0, 5)
    j = simplify(fg.make_jaxpr(f)(x).jaxpr)
    names = [e.primitive.name for e in j.eqns]
    assert names.count("sin") == 1 and names.count("cos") == 1
    got = fg.jit(f)(x)
    np.testing.assert_allclose(got[0], 4.0 * np.sin(x), rtol=1e-15)
    np.testing.assert_array_equal(got[1], np.zeros(5))


def _with_dead(v):
    out = _step_live(v)
    fnp.cos(v) * 3.0  # dead
    fnp.exp(out)  # dead
    return out


def test_program_key_ignores_dead_equations():
    x = np.linspace(-1.0, 1.0, 8)
    ka = program_cache.key(inline_calls(fg.make_jaxpr(_with_dead)(x)), "fp", "s")
    kb = program_cache.key(inline_calls(fg.make_jaxpr(_step_live)(x)), "fp", "s")
    kc = program_cache.key(inline_calls(fg.make_jaxpr(lambda v: _step_live(v) * 2.0)(x)), "fp", "s")
    assert ka == kb and ka != kc


def test_provider_calls_are_recorded_and_replayed_once(monkeypatch):
    calls = []

    @engine.provider("fgtest_once")
    def bind_names(name: str, width: int = 4) -> None:
        calls.append((name, width))

    with engine.recording() as log:
        for _ in range(3):
            bind_names("a")
        bind_names("b", 8)
        with engine.recording() as inner:
            bind_names("a")
            bind_names("c")
    assert inner == [["fgtest_once", "a", 4], ["fgtest_once", "c", 4]]
    assert log == [["fgtest_once", "a", 4], ["fgtest_once", "b", 8], ["fgtest_once", "c", 4]]
    calls.clear()
    for q in log + log:  # a record written by older code lists one call per call site
        engine.replay(q)
    assert calls == [("a", 4), ("b", 8), ("c", 4)]
    with pytest.raises(KeyError):
        engine.replay(["fgtest_no_such_provider", "x"])


def _lines_of(f, *args):
    first = f.__code__.co_firstlineno
    return [(e.primitive.name, e.source_info.lineno - first) for e in fg.make_jaxpr(f)(*args).jaxpr.eqns]


def test_source_lines_are_shared_per_call_site_and_still_right():
    def f(x):
        y = x
        for _ in range(3):
            y = y * 2.0  # line +3
        return fnp.sin(y)  # line +4

    j = fg.make_jaxpr(f)(np.ones(3)).jaxpr
    muls = [e for e in j.eqns if e.primitive.name == "mul"]
    assert len(muls) == 3 and all(e.source_info is muls[0].source_info for e in muls)
    assert _lines_of(f, np.ones(3)) == [("broadcast_in_dim", 3), ("mul", 3), ("mul", 3), ("mul", 3), ("sin", 4)]
    info = j.eqns[-1].source_info
    assert info.filename == __file__ and info.name == "f" and info.line == "return fnp.sin(y)  # line +4"

    def g(x):  # two call sites on one line: one SourceLine each, the same line number
        return fnp.cos(x) + fnp.cos(x * 3.0)

    eqns = fg.make_jaxpr(g)(np.ones(2)).jaxpr.eqns
    cos = [e for e in eqns if e.primitive.name == "cos"]
    assert cos[0].source_info is not cos[1].source_info
    assert cos[0].source_info.lineno == cos[1].source_info.lineno == g.__code__.co_firstlineno + 1


def test_source_lines_in_bodies_grads_and_errors():
    def body(i, c):
        return fnp.tanh(c) + 1.0  # line +1

    def f(x):
        return lax.fori_loop(0, 3, body, x * 2.0)  # line +4

    first = body.__code__.co_firstlineno
    j = fg.make_jaxpr(f)(np.ones(2)).jaxpr
    assert [e.source_info.lineno - first for e in j.eqns][-1] == 4
    inner = [e for e in j.eqns if e.params and any(hasattr(v, "jaxpr") for v in e.params.values())][0]
    sub = next(v for v in inner.params.values() if hasattr(v, "jaxpr")).jaxpr
    assert {e.source_info.lineno - first for e in sub.eqns if e.source_info is not None} >= {1}

    def h(x):
        return fnp.sum(fnp.sin(x) * x)  # line +1

    gj = fg.make_jaxpr(fg.grad(h))(np.ones(3)).jaxpr  # line +3: where the backward pass runs
    assert {e.source_info.lineno - h.__code__.co_firstlineno for e in gj.eqns if e.source_info} == {1, 3}

    def bad(x):
        return float(x) + 1.0  # line +1: a concretization error names it

    with pytest.raises(fg.errors.ConcretizationError) as err:
        fg.jit(bad)(np.float64(1.0))
    assert f"line {bad.__code__.co_firstlineno + 1}" in str(err.value) and "float(x) + 1.0" in str(err.value)
