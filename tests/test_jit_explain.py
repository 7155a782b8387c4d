"""FUNCGRAD_EXPLAIN_CACHE_MISSES / FUNCGRAD_LOG_COMPILES: why jit traced again, argument by
argument, against the nearest cached signature; and the retrace count."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config


@pytest.fixture
def explain(monkeypatch):
    monkeypatch.setenv(config.EXPLAIN_CACHE_MISSES, "1")
    monkeypatch.delenv(config.LOG_COMPILES, raising=False)


def f(x, params, n, *, mode="a", scale=1.0):
    return x * n * scale + params["w"]


def lines(capfd):
    return capfd.readouterr().err


def test_first_call_and_hits_say_nothing(explain, capfd):
    jf = fg.jit(lambda x: x + 1.0)
    jf(np.ones(3))
    jf(np.ones(3))
    assert lines(capfd) == "" and jf.retrace_count() == 0 and jf.cache_size() == 1


@pytest.mark.parametrize("call, want", [
    (lambda jf: jf(np.ones(4), {"w": np.ones(4)}, 2),
     ["argument 0 ('x'): f64[3] -> f64[4] (shape (3,) -> (4,))",
      "argument 1 ('params')['w']: f64[3] -> f64[4] (shape (3,) -> (4,))"]),
    (lambda jf: jf(np.ones(3), {"w": np.ones(3, np.float32)}, 2),
     ["argument 1 ('params')['w']: f64[3] -> f32[3] (dtype float64 -> float32)"]),
    (lambda jf: jf(np.ones(3), {"w": 1.0}, 2),
     ["argument 1 ('params')['w']: f64[3] -> f64[] (shape (3,) -> (); weak type: strong -> weak; "
      "an array -> a Python float)"]),
    (lambda jf: jf(np.ones(3), {"w": np.ones(3), "b": 1}, 2),
     ["argument 1 ('params'): pytree structure {'w': *} -> {'b': *, 'w': *}"]),
    (lambda jf: jf(np.ones(3), {"w": np.ones(3)}, 3), ["argument 2 ('n') (static): value 2 -> 3"]),
    (lambda jf: jf(np.ones(3), {"w": np.ones(3)}, 2.0),
     ["argument 2 ('n') (static): type int -> float (value 2 -> 2.0)"]),
    (lambda jf: jf(np.ones(3), {"w": np.ones(3)}, 2, mode="b"), ["keyword argument 'mode' (static): passed now, not before"]),
    (lambda jf: jf(np.ones(3), {"w": np.ones(3)}, 2, scale=2.0), ["keyword argument 'scale': passed now, not before"]),
])
def test_each_kind_of_difference_is_named(explain, capfd, call, want):
    jf = fg.jit(f, static_argnums=2, static_argnames="mode")
    jf(np.ones(3), {"w": np.ones(3)}, 2)
    assert lines(capfd) == ""
    call(jf)
    err = lines(capfd)
    assert "[funcgrad] jit(f): cache miss, tracing again (retrace 1; 1 signature cached): " \
           "the nearest cached signature differs in" in err
    assert [ln.strip() for ln in err.splitlines()[1:]] == want
    assert jf.retrace_count() == 1 and jf.cache_size() == 2


def test_weak_type_and_keyword_values(explain, capfd):
    jf = fg.jit(f, static_argnums=2)
    jf(np.ones(3), {"w": np.ones(3)}, 2, scale=2.0)
    jf(np.ones(3), {"w": np.ones(3)}, 2, scale=np.ones(()))
    assert "keyword argument 'scale': f64[] -> f64[] (weak type: weak -> strong; a Python float -> an array)" in lines(capfd)
    jf(np.ones(3), {"w": np.ones(3)}, 2, scale=2)
    # two cached signatures are one difference away: the most recent is reported
    assert ("keyword argument 'scale': f64[] -> i64[] (dtype float64 -> int64; weak type: strong -> weak; "
            "an array -> a Python int)") in lines(capfd)


def test_nearest_of_several_signatures(explain, capfd):
    jf = fg.jit(lambda x, y: x * y)
    jf(np.ones(3), np.ones(3))
    jf(np.ones(5), np.ones(5))
    jf(np.ones(5), np.ones(5, np.int64))  # one difference from the second, two from the first
    err = lines(capfd).split("retrace 2")[1]
    assert "2 signatures cached" in err
    assert "argument 1 ('y'): f64[5] -> i64[5] (dtype float64 -> int64)" in err and "argument 0" not in err
    assert jf.retrace_count() == 2


def test_positional_count_and_cleared_cache(explain, capfd):
    jf = fg.jit(lambda *xs: sum(xs))
    jf(1.0, 2.0)
    jf(1.0, 2.0, 3.0)
    err = lines(capfd)
    assert "called with 3 positional arguments, 2 before" in err
    assert "argument 2: passed now, not before" in err
    jf.clear_cache()
    jf(1.0, 2.0)
    err = lines(capfd)
    assert "retrace 2; 0 signatures cached" in err and "the cache was cleared" in err
    assert jf.retrace_count() == 2 and jf.cache_size() == 1


def test_closing_over_tracers_is_explained(explain, capfd):
    inner = fg.jit(lambda x, y: x * y)

    def outer(y):
        return fg.jit(lambda x: inner(x, y))(y)

    jf = fg.jit(lambda x: x * 2.0)

    def uses(y):
        return fg.jit(lambda x: jf(x) * y)(y)  # closes over the grad's tracer y

    g = fg.grad(uses)
    np.testing.assert_allclose(g(1.5), 6.0)
    np.testing.assert_allclose(fg.grad(outer)(2.0), 4.0)
    assert "not cached" not in lines(capfd)  # each closure is traced once: first trace

    body = fg.jit(lambda x: x)
    closing = [None]

    def h(y):
        closing[0] = fg.jit(lambda x: body(x) * y)
        return closing[0](y) + closing[0](y)  # the same jitted closure traced twice

    fg.grad(h)(1.0)
    err = lines(capfd)
    assert "tracing again (retrace 1): it closes over values traced by an enclosing transform" in err
    assert closing[0].retrace_count() == 1 and closing[0].cache_size() == 0


def test_log_compiles_gives_one_line_with_the_cause(monkeypatch, capfd):
    monkeypatch.setenv(config.LOG_COMPILES, "1")
    monkeypatch.delenv(config.EXPLAIN_CACHE_MISSES, raising=False)
    jf = fg.jit(f, static_argnums=2)
    jf(np.ones(3), {"w": np.ones(3)}, 2)
    jf(np.ones(4), {"w": np.ones(4)}, 2)
    err = lines(capfd).splitlines()
    assert err == ["[funcgrad] compiling jit(f) [cache size 0]: first call",
                   "[funcgrad] compiling jit(f) [cache size 1]: argument 0 ('x'): f64[3] -> f64[4] "
                   "(shape (3,) -> (4,)) (and 1 more difference)"]


def test_switch_off_is_silent_but_still_counts(monkeypatch, capfd):
    monkeypatch.delenv(config.EXPLAIN_CACHE_MISSES, raising=False)
    monkeypatch.delenv(config.LOG_COMPILES, raising=False)
    jf = fg.jit(fnp.sin)
    jf(np.ones(2))
    jf(np.ones(3))
    jf(np.ones(3, np.float32))
    assert lines(capfd) == "" and jf.retrace_count() == 2
