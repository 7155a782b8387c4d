"""The JAX promotion mode (``funcgrad.promotion_rules("jax")``, ``config.update(
"funcgrad_promotion", "jax")``, ``FUNCGRAD_PROMOTION=jax``) against JAX's own table, and
the default (NumPy 2's rules) against NumPy.

``tests/data/jax_promotion.json`` is JAX 0.10.2's answer (with ``jax_enable_x64``) for every
pair of funcgrad's dtypes and with weak Python scalars, written by
``tools/jax_promotion_table.py``; funcgrad never imports JAX. Every path that decides a
dtype is checked on every pair: ``result_type``/``promote_types``, eager ``fnp.add`` (its
fast path and its general path), the operators on values, ``make_jaxpr``, ``jit``, ``vmap``
and the joining/selecting functions.
"""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config
from funcgrad.flatten_util import ravel_pytree

TABLE = json.loads((Path(__file__).parent / "data" / "jax_promotion.json").read_text())
DTYPES = [np.dtype(d) for d in TABLE["dtypes"]]
PAIRS = [(a, b) for a in DTYPES for b in DTYPES]
SCALARS = {"bool": True, "int": 1, "float": 1.0, "complex": 1j}
RULES = ["numpy", "jax"]


def _want(a, b, rules) -> np.dtype:
    """The dtype of an operation on arrays of dtypes ``a`` and ``b``: JAX's table, or NumPy's."""
    if rules == "jax":
        return np.dtype(TABLE["pairs"][f"{np.dtype(a)},{np.dtype(b)}"]["add"][0])
    return np.result_type(a, b)


def _value(dt, n=3):
    return (np.arange(n) % 2 + 1).astype(dt)


def test_the_table_is_jaxs_lattice_where_it_should_differ_from_numpy():
    # The facts the mode exists for, read from the table (JAX's answers): an integer with
    # float32 is float32 and with complex64 complex64 in JAX, while NumPy widens the
    # 32/64-bit ones; uint64 with a signed integer is float64 in both.
    for a, b in PAIRS:
        row = TABLE["pairs"][f"{a},{b}"]
        assert row["promote_types"] == row["result_type"] == row["add"][0]
    for i in ("int32", "int64", "uint32", "uint64"):
        assert TABLE["pairs"][f"{i},float32"]["add"][0] == "float32" != np.result_type(i, np.float32).name
        assert TABLE["pairs"][f"complex64,{i}"]["add"][0] == "complex64" != np.result_type(i, np.complex64).name
    assert TABLE["pairs"]["uint64,int64"]["add"][0] == "float64" == np.result_type(np.uint64, np.int64).name
    # Weak Python scalars give the same dtype in JAX as in NumPy 2 (NEP 50).
    for a in DTYPES:
        for name, s in SCALARS.items():
            row = TABLE["with_scalar"][f"{a},{name}"]
            assert row["add"][0] == row["radd"][0] == row["result_type"] == np.add(_value(a), s).dtype.name


@pytest.mark.parametrize("rules", RULES)
def test_result_type_and_promote_types(rules):
    with fg.promotion_rules(rules):
        for a, b in PAIRS:
            want = _want(a, b, rules)
            assert fnp.result_type(a, b) == want, (a, b)
            assert fnp.result_type(np.ones(1, a), np.ones(1, b)) == want, (a, b)
            assert fg.dtypes.result_type(a, b) == want, (a, b)
            promoted = TABLE["pairs"][f"{a},{b}"]["promote_types"] if rules == "jax" else np.promote_types(a, b)
            assert fnp.promote_types(a, b) == np.dtype(promoted), (a, b)
        for a in DTYPES:
            for name, s in SCALARS.items():
                want = TABLE["with_scalar"][f"{a},{name}"]["result_type"]
                assert fnp.result_type(np.ones(1, a), s) == np.dtype(want), (a, name)


@pytest.mark.parametrize("rules", RULES)
def test_eager_add_fast_and_general_path(rules):
    with fg.promotion_rules(rules):
        for a, b in PAIRS:
            want = _want(a, b, rules)
            x, y = _value(a), _value(b)
            for add in (fnp.add, fnp.add, fnp.add.general):  # (the fast path twice: its plan is cached)
                out = add(x, y)
                assert out.dtype == want, (a, b, add)
                np.testing.assert_array_equal(out, np.add(x.astype(want), y.astype(want)))


@pytest.mark.parametrize("rules", RULES)
def test_operators_on_values(rules):
    with fg.promotion_rules(rules):
        for a, b in PAIRS:
            want = _want(a, b, rules)
            x, y = fnp.asarray(_value(a)), fnp.asarray(_value(b))
            assert type(x) is fg.Array
            for out in (x + y, y + x, x * y, x + _value(b), x + np.asarray(_value(b))[0],
                        np.asarray(_value(b))[0] * x):
                assert out.dtype == want and type(out) is fg.Array, (a, b)
            if want.kind != "b":
                np.testing.assert_array_equal(x - y, np.subtract(_value(a).astype(want), _value(b).astype(want)))
            assert (x < y).dtype == np.bool_
            assert (x[0] + y[0]).dtype == want  # 0-d values take NumPy's scalar math


def _all_pairs(*xs):
    n = len(xs)
    return [xs[i] + xs[j] for i in range(n) for j in range(n)] + \
        [fnp.add(xs[i], xs[j]) for i in range(n) for j in range(n)]


@pytest.mark.parametrize("rules", RULES)
def test_make_jaxpr_jit_and_vmap(rules):
    n = len(DTYPES)
    wants = [_want(a, b, rules) for a, b in PAIRS] * 2
    xs = [_value(d) for d in DTYPES]
    with fg.promotion_rules(rules):
        closed = fg.make_jaxpr(_all_pairs)(*xs)
        assert [o.dtype for o in closed.out_avals] == wants
        outs = fg.jit(_all_pairs)(*xs)
        assert [o.dtype for o in outs] == wants
        eager = _all_pairs(*xs)
        for k, (o, e) in enumerate(zip(outs, eager)):
            np.testing.assert_array_equal(o, e, err_msg=str(PAIRS[k % (n * n)]))
        batched = fg.vmap(_all_pairs)(*[np.stack([x, x]) for x in xs])
        assert [o.dtype for o in batched] == wants and all(o.shape == (2, 3) for o in batched)


@pytest.mark.parametrize("rules", RULES)
def test_weak_python_scalars(rules):
    with fg.promotion_rules(rules):
        f = fg.jit(lambda x, s: (x + s, s + x))
        for a in DTYPES:
            x = _value(a)
            for name, s in SCALARS.items():
                row = TABLE["with_scalar"][f"{a},{name}"]
                want, rwant = np.dtype(row["add"][0]), np.dtype(row["radd"][0])
                assert fnp.add(x, s).dtype == want and fnp.add(s, x).dtype == rwant, (a, name)
                assert (fnp.asarray(x) + s).dtype == want and (s + fnp.asarray(x)).dtype == rwant, (a, name)
                assert [o.dtype for o in f(x, s)] == [want, rwant], (a, name)
                closed = fg.make_jaxpr(lambda x, s: fnp.add(x, s))(x, s)
                assert closed.out_avals[0].dtype == want, (a, name)
        g = fg.jit(lambda s, t: s + t)
        for m, s in SCALARS.items():
            for n, t in SCALARS.items():
                assert g(s, t).dtype == np.dtype(TABLE["scalar_pairs"][f"{m},{n}"][0]), (m, n)


def test_a_jitted_function_traces_once_per_rules_and_keeps_both():
    f = fg.jit(lambda x, y: x * y + 1)
    x, y = np.ones(4, np.int32), np.ones(4, np.float32)
    for _ in range(2):
        for _ in range(3):  # (repeat calls take the dispatch plans and the native entry)
            assert f(x, y).dtype == np.float64
        with fg.promotion_rules("jax"):
            for _ in range(3):
                assert f(x, y).dtype == np.float32
    assert f.retrace_count() == 1  # one trace per rules; switching back finds the earlier one
    f.clear_cache()
    with fg.promotion_rules("jax"):
        assert f(x, y).dtype == np.float32
    assert f.retrace_count() == 2


def test_grad_of_mixed_dtypes_follows_the_rules():
    def loss(w, x):
        return fnp.sum(w * x)

    # (values: the operators of plain NumPy arrays are NumPy's own, whatever the rules)
    w, x = fnp.ones(3, np.float32), fnp.arange(3, dtype=np.int64)
    with fg.promotion_rules("jax"):
        assert loss(w, x).dtype == np.float32
        g = fg.grad(loss)(w, x)
        assert g.dtype == np.float32
        np.testing.assert_array_equal(g, x.astype(np.float32))
        assert fg.jit(fg.grad(loss))(w, x).dtype == np.float32
    assert loss(w, x).dtype == np.float64


@pytest.mark.parametrize("rules", RULES)
def test_joining_and_selecting_follow_the_rules(rules):
    cond = np.array([True, False, True])
    with fg.promotion_rules(rules):
        for a, b in PAIRS:
            want = _want(a, b, rules)
            x, y = _value(a), _value(b)
            assert fnp.concatenate([x, y]).dtype == want, (a, b)
            assert fnp.concatenate.general([x, y]).dtype == want, (a, b)
            assert fnp.stack([x, y]).dtype == want and fnp.hstack([x, y]).dtype == want, (a, b)
            out = fnp.where(cond, x, y)
            assert out.dtype == want and fnp.where.general(cond, x, y).dtype == want, (a, b)
            np.testing.assert_array_equal(out, np.where(cond, x.astype(want), y.astype(want)))
            if want.kind != "c":  # (JAX's clip refuses complex values)
                assert fnp.clip(x, y, y).dtype == want, (a, b)
            assert ravel_pytree([x, y])[0].dtype == want, (a, b)
        closed = fg.make_jaxpr(lambda x, y: fnp.concatenate([x, fnp.where(cond, x, y)]))(
            _value(np.int32), _value(np.float32))
        assert closed.out_avals[0].dtype == _want(np.int32, np.float32, rules)


def test_config_flag_and_context_manager():
    assert config.read("funcgrad_promotion") == "numpy" == config.funcgrad_promotion
    config.update("funcgrad_promotion", "jax")
    try:
        assert config.read("funcgrad_promotion") == "jax"
        assert fnp.add(np.ones(2, np.int64), np.ones(2, np.float32)).dtype == np.float32
        with fg.promotion_rules("numpy"):
            assert fnp.add(np.ones(2, np.int64), np.ones(2, np.float32)).dtype == np.float64
        assert config.read("funcgrad_promotion") == "jax"
    finally:
        config.update("funcgrad_promotion", "numpy")
    with pytest.raises(ValueError, match="one of"):
        config.update("funcgrad_promotion", "torch")
    with pytest.raises(ValueError, match="one of"):
        with fg.promotion_rules("standard"):
            pass
    assert config.read("funcgrad_promotion") == "numpy"
    assert "funcgrad_promotion" in config.FUNCGRAD_FLAGS


def test_strict_mode_still_applies_under_jax_rules():
    with fg.promotion_rules("jax"), fg.numpy_dtype_promotion("strict"):
        with pytest.raises(fg.errors.TypePromotionError):
            fnp.add(np.ones(2, np.int32), np.ones(2, np.float32))
        assert fnp.add(np.ones(2, np.float32), 1.0).dtype == np.float32


def _run(env_value):
    code = ("import numpy as np, funcgrad.numpy as fnp; from funcgrad import config; "
            "print(config.read('funcgrad_promotion'), fnp.add(np.ones(2, np.int32), np.ones(2, np.float32)).dtype)")
    env = dict(os.environ, FUNCGRAD_PROMOTION=env_value, PYTHONPATH=str(Path(__file__).parent.parent))
    return subprocess.run([sys.executable, "-W", "always", "-c", code], env=env, capture_output=True, text=True,
                          check=True, cwd=str(Path(__file__).parent.parent))


def test_environment_setting_chooses_the_rules_at_import():
    assert _run("jax").stdout.split() == ["jax", "float32"]
    bad = _run("jaxx")
    assert bad.stdout.split() == ["numpy", "float64"]
    assert "FUNCGRAD_PROMOTION='jaxx' is not valid" in bad.stderr


def test_switching_forgets_eager_plans():
    x, y = np.ones(3, np.uint32), np.ones(3, np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            assert fnp.multiply(x, y).dtype == np.complex128
            with fg.promotion_rules("jax"):
                assert fnp.multiply(x, y).dtype == np.complex64
                assert fnp.where(np.array([True, False, True]), x, y).dtype == np.complex64
            assert fnp.where(np.array([True, False, True]), x, y).dtype == np.complex128


@pytest.mark.parametrize("rules", RULES)
def test_other_functions_promote_their_operands_by_the_rules(rules):
    # Each result dtype is the promotion of the operands' dtypes (JAX's gives these under
    # the JAX mode: average, r_, geomspace, vander, ravel_pytree and quantile with a float32
    # q). Under NumPy's rules, integer data averages and interpolates in float64.
    i32, f32 = fnp.ones(3, np.int32), fnp.full(3, 2.0, np.float32)
    u64, c64 = fnp.ones(3, np.uint64), fnp.ones(3, np.complex64)
    pair = _want(np.int32, np.float32, rules)
    with fg.promotion_rules(rules):
        assert fnp.average(i32, weights=f32).dtype == pair
        assert fnp.average(f32, weights=i32).dtype == pair
        assert fnp.average(c64, weights=i32).dtype == _want(np.complex64, np.int32, rules)
        assert fnp.r_[i32, f32].dtype == pair
        assert fnp.r_[u64, c64].dtype == _want(np.uint64, np.complex64, rules)
        assert fnp.geomspace(np.int32(1), np.float32(8), 4).dtype == pair
        assert fnp.vander(f32).dtype == _want(np.float32, np.int64, rules)
        assert ravel_pytree({"a": i32, "b": f32})[0].dtype == pair
        assert fnp.quantile(i32, np.float32(0.5)).dtype == pair
        np.testing.assert_allclose(fnp.average(i32, weights=f32), 1.0)
