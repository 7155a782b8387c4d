"""The eager fast path of funcgrad.numpy (``numpy_api/eager_fast.py``): with plain inputs
and nothing staging it must give exactly what the general path gives -- values, dtypes
(funcgrad's promotion, weak Python scalars), result types, value-ness (read-only, never
aliasing an input) and errors -- and never run while anything traces."""
import itertools

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core.array import Array
from funcgrad.numpy_api import eager_native


@pytest.fixture(autouse=True, params=["python", "native"])
def _entry(request):
    """Every test runs on the Python fast path and on the native entry (``eager_native``)."""
    native = request.param == "native"
    if native and not eager_native.enable():
        pytest.skip("no native eager entry in this process")
    eager_native.enable(native)
    yield
    eager_native.enable(True)

FAST = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "less", "equal", "arctan2",
        "copysign", "sin", "exp", "log", "tanh", "sqrt", "rint", "where", "matmul", "concatenate"]
UNARY = {"sin", "exp", "log", "tanh", "sqrt", "rint"}
DTYPES = [np.bool_, np.int8, np.int16, np.uint8, np.uint16, np.int32, np.int64, np.uint32, np.uint64, np.float32,
          np.float64]


def _general(name):
    return getattr(fnp, name).general


def _same(got, want):
    """Same type, dtype, values (NaN == NaN), and both values (read-only, own memory)."""
    assert type(got) is type(want), (type(got), type(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    if isinstance(got, np.ndarray):
        assert got.shape == want.shape and not got.flags.writeable


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as e:  # noqa: BLE001 - the test compares error types of both paths
        return "error", type(e)


def _check(name, *args):
    _outcome(getattr(fnp, name), *args)  # (the first call sets the native entry's plan)
    fast_kind, fast = _outcome(getattr(fnp, name), *args)
    slow_kind, slow = _outcome(_general(name), *args)
    assert fast_kind == slow_kind, (name, args, fast, slow)
    if fast_kind == "error":
        assert fast is slow, (name, fast, slow)
        return None
    _same(fast, slow)
    for a in args:
        for x in (a if isinstance(a, list) else [a]):
            if isinstance(x, np.ndarray) and isinstance(fast, np.ndarray):
                assert not np.shares_memory(fast, x), f"{name}: the result aliases an input"
    return fast


def test_every_fast_function_is_installed():
    for name in FAST:
        fn = getattr(fnp, name)
        assert fn.eager_fast and fn.values_boundary and fn.__name__ == name and fn.__doc__


def _operand(kind, dtype, rng, shape=(3,)):
    if kind == "array":
        return (rng.normal(size=shape) * 3).astype(dtype)
    if kind == "value":
        return fnp.asarray((rng.normal(size=shape) * 3).astype(dtype)) + np.zeros((), dtype)
    if kind == "numpy scalar":
        return dtype(2)
    return {np.bool_: True, np.int8: -3, np.int16: 300, np.uint8: 200, np.uint16: 7, np.int32: 3, np.int64: -2,
            np.uint32: 7, np.uint64: 9, np.float32: 0.5, np.float64: -1.5}[dtype]


@pytest.mark.parametrize("name", [n for n in FAST if n not in ("where", "matmul", "concatenate")])
def test_elementwise_dtype_grid(name):
    """Every pair of dtypes and operand kinds (ndarray, funcgrad value, NumPy scalar,
    Python scalar): same dtype, values and errors as the general path."""
    rng = np.random.default_rng(0)
    kinds = ["array", "value", "numpy scalar", "python"]
    if name in UNARY:
        for dt, kind in itertools.product(DTYPES, kinds):
            _check(name, _operand(kind, dt, rng))
        _check(name, np.array([np.inf, -np.inf, np.nan, 0.0, -1.0]))  # silenced fp errors
        return
    for (d1, k1), (d2, k2) in itertools.product(itertools.product(DTYPES, kinds), repeat=2):
        _check(name, _operand(k1, d1, rng), _operand(k2, d2, rng))


@pytest.mark.parametrize("name", ["add", "divide", "maximum", "less", "arctan2"])
def test_broadcasting_layouts_and_errors(name):
    rng = np.random.default_rng(1)
    f = np.asfortranarray(rng.normal(size=(3, 4)))
    pairs = [(rng.normal(size=(3, 1)), rng.normal(size=(1, 4))), (f, rng.normal(size=4)), (f, f),
             (rng.normal(size=(2, 3)), rng.normal(size=(3, 2))), (rng.normal(size=(0, 3)), 1.0),
             (np.float64(2.0), np.array(3.0)), (np.array(1e308), np.array(1e308)), (np.arange(3), 2**40),
             (np.arange(3, dtype=np.int32), 2**40), (np.arange(3, dtype=np.uint32), -1), ("a", 1.0), (None, 1.0)]
    for x, y in pairs:
        got = _check(name, x, y)
        if got is not None and isinstance(got, np.ndarray) and got.ndim == 2:
            assert got.flags.c_contiguous == _general(name)(x, y).flags.c_contiguous


def test_where_grid():
    rng = np.random.default_rng(2)
    c = rng.normal(size=(3,)) > 0
    for (d1, k1), (d2, k2) in itertools.product(itertools.product(DTYPES, ["array", "python"]), repeat=2):
        _check("where", c, _operand(k1, d1, rng), _operand(k2, d2, rng))
    _check("where", fnp.asarray(c), rng.normal(size=(2, 3)), 0.0)
    _check("where", c[:1], np.float32(1), np.float32(2))
    _check("where", np.array(True), np.array(1.0), np.array(2.0))  # 0-d: a read-only 0-d array
    _check("where", c, rng.normal(size=4), 1.0)  # bad shapes: the general path's error
    _check("where", c.astype(np.int64), 1.0, 2.0)  # not bool: the general path converts
    for got, want in zip(fnp.where(c), np.where(c)):  # the one-argument form: nonzero
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fnp.where(c, size=5, fill_value=-1)[0], fnp.nonzero(c, size=5, fill_value=-1)[0])


def test_matmul_cases():
    rng = np.random.default_rng(3)
    for dt in DTYPES:
        a, b = (rng.normal(size=(3, 4)) * 3).astype(dt), (rng.normal(size=(4, 2)) * 3).astype(dt)
        _check("matmul", a, b)
        _check("matmul", a[0], b)
        _check("matmul", a, b[:, 0])
        _check("matmul", a[0], b[:, 0])  # a NumPy scalar
    a = rng.normal(size=(3, 4))
    for b in (rng.normal(size=(3, 2)), rng.normal(size=(4, 2)).astype(np.float32), np.float64(2.0),
              rng.normal(size=(2, 4, 2)), fnp.asarray(rng.normal(size=(4, 2))), [[1.0]] * 4):
        _check("matmul", a, b)


def test_concatenate_cases():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(1, 3))
    for args in ([a, b], (a, fnp.asarray(b)), [a], [a, b.astype(np.float32)], [a, a.T], [a[0], b],
                 [np.float64(1.0)], [], [a, 1.0]):
        _check("concatenate", args)
        _check("concatenate", args, -2)
        _check("concatenate", args, 2)
    assert np.shares_memory(a, fnp.concatenate([a])) is False
    for kw in ({"dtype": np.float32}, {"axis": None}):
        _same(fnp.concatenate([a, b], **kw), fnp.concatenate.general([a, b], **kw))
    with pytest.raises(ValueError, match="concatenate"):
        fnp.concatenate([a, a.T])


def test_results_are_values_never_aliases():
    x = np.arange(3.0)
    for out in (fnp.add(x, 0.0), fnp.where(x > 5, 0.0, x), fnp.concatenate([x]), fnp.maximum(x, x)):
        assert type(out) is Array and not out.flags.writeable and not np.shares_memory(out, x)
        with pytest.raises(ValueError):
            out[0] = 1.0
    s = fnp.sin(np.float32(1.0))  # a 0-d value (NumPy gives a NumPy scalar)
    assert type(s) is Array and s.dtype == np.float32 and s.shape == () and not s.flags.writeable


def test_never_taken_while_tracing():
    """Staging records the primitive (constants included); transforms see tracers."""
    c = np.arange(3.0)
    jaxpr = str(fg.make_jaxpr(lambda: fnp.add(c, 1.0) + fnp.where(c > 1, c, 0.0))())
    assert "add" in jaxpr and "select_n" in jaxpr
    jaxpr = str(fg.make_jaxpr(lambda x: fnp.concatenate([x, c]) @ fnp.ones(6))(c))
    assert "concatenate" in jaxpr and "dot_general" in jaxpr
    g = fg.grad(lambda x: fnp.sum(fnp.sin(fnp.matmul(fnp.where(x > 0, x, 0.0), np.eye(3)))))(c)
    np.testing.assert_allclose(g, np.cos(c) * (c > 0))
    v = fg.vmap(lambda x: fnp.add(x, c))(np.ones((2, 3)))
    np.testing.assert_array_equal(v, np.ones((2, 3)) + c)
    j = fg.jit(lambda x: fnp.concatenate([fnp.divide(x, 2), fnp.exp(x)]))(c)
    np.testing.assert_allclose(j, np.concatenate([c / 2, np.exp(c)]))


_PROGRAM_OPS = [
    ("add", 2), ("subtract", 2), ("multiply", 2), ("divide", 2), ("maximum", 2), ("arctan2", 2),
    ("sin", 1), ("exp", 1), ("tanh", 1), ("rint", 1),
]


def _run(program, env, fast: bool):
    env = list(env)
    for op, ins, extra in program:
        if op == "where":
            fn = fnp.where if fast else fnp.where.general
            args = [fnp.greater(env[ins[0]], 0.0) if fast else fnp.greater.general(env[ins[0]], 0.0),
                    env[ins[1]], extra]
        elif op == "concatenate":
            fn = fnp.concatenate if fast else fnp.concatenate.general
            args = [[env[i] for i in ins]]
        else:
            fn = getattr(fnp, op) if fast else _general(op)
            args = [env[i] for i in ins] + ([extra] if extra is not None else [])
        out = fn(*args)
        env.append(out[:3] if op == "concatenate" else out)
    return env


def test_random_programs_fast_vs_general():
    """Random small programs over float64/float32/int arrays and Python scalars, run down
    both paths: every intermediate has the same type, dtype and values."""
    rng = np.random.default_rng(5)
    for trial in range(40):
        env = [rng.normal(size=3), rng.normal(size=3).astype(np.float32), np.arange(3, dtype=np.int32) - 1,
               fnp.asarray(rng.normal(size=3))]
        program = []
        for _ in range(8):
            n = len(env) + len(program)
            kind = rng.integers(0, len(_PROGRAM_OPS) + 2)
            if kind == len(_PROGRAM_OPS):
                program.append(("where", [int(rng.integers(n)), int(rng.integers(n))], float(rng.normal())))
            elif kind == len(_PROGRAM_OPS) + 1:
                program.append(("concatenate", [int(rng.integers(n)), int(rng.integers(n))], None))
            else:
                op, nin = _PROGRAM_OPS[kind]
                ins = [int(rng.integers(n)) for _ in range(nin)]
                extra = None
                if nin == 2 and rng.random() < 0.3:
                    ins, extra = ins[:1], [2, 0.5, True][int(rng.integers(3))]
                program.append((op, ins, extra))
        kinds = [_outcome(lambda: _run(program, env, fast)) for fast in (True, False)]
        assert kinds[0][0] == kinds[1][0], (trial, program)
        if kinds[0][0] == "ok":
            for got, want in zip(kinds[0][1][len(env):], kinds[1][1][len(env):]):
                _same(got, want)
        else:
            assert kinds[0][1] is kinds[1][1]
