"""Table-driven op tests: one ``OpRow`` per (function, sample inputs).

Rows live in ``tests/op_rows/<family>.py`` as a module-level list ``ROWS``. Each row
is checked by ``tests/test_op_table.py``:

- eager value of ``row.fun(*row.args)`` vs ``row.ref(*row.args)`` (NumPy): same type
  (ndarray or NumPy scalar), shape and dtype; floats within ``rtol`` (1e-14 for
  float64 by default), integers and booleans exactly, NaNs in the same places;
- ``eval(make_jaxpr(row.fun))`` vs eager, and the jaxpr type-checks.

Later work adds columns (jvp/vjp vs finite differences, vmap vs loop, jit vs eager)
that read the same rows; ``row.diff`` lists the differentiable argument positions
(float arguments by default) and ``row.tags`` holds exclusions with reasons.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np


@dataclasses.dataclass
class OpRow:
    name: str  # test id, e.g. "add/broadcast"
    fun: Callable  # funcgrad version: takes row.args positionally
    ref: Callable  # NumPy reference with the same signature
    args: tuple
    rtol: float | None = None  # None: 1e-14 for float64, 2e-6 for float32
    atol: float = 0.0
    diff: tuple | None = None  # differentiable argnums (None: the float arguments)
    tags: dict = dataclasses.field(default_factory=dict)  # e.g. {"no_grad": "reason"}

    @property
    def id(self) -> str:
        return self.name


def grad_argnums(row: OpRow) -> tuple:
    """The argument positions to differentiate: ``row.diff``, or the float arguments."""
    if row.diff is not None:
        return tuple(row.diff)
    return tuple(
        i for i, a in enumerate(row.args)
        if isinstance(a, (float, np.inexact)) or (isinstance(a, np.ndarray) and a.dtype.kind in "fc")
    )


def row(name, fun, ref, *args, **kw) -> OpRow:
    return OpRow(name, fun, ref, tuple(args), **kw)


def same(name, fn_name, *args, **kw) -> OpRow:
    """A row calling ``fnp.<fn_name>`` and ``np.<fn_name>`` with the same static kwargs
    (``static=dict(axis=0)``)."""
    import funcgrad.numpy as fnp

    static = kw.pop("static", {})
    f, g = getattr(fnp, fn_name), getattr(np, fn_name)
    return row(name, lambda *a: f(*a, **static), lambda *a: g(*a, **static), *args, **kw)


def lam(name, fn, *args, **kw) -> OpRow:
    """A row whose body is written once against a module: ``fn(module, *args)`` is
    called with ``funcgrad.numpy`` and with ``numpy``."""
    import funcgrad.numpy as fnp

    return row(name, lambda *a: fn(fnp, *a), lambda *a: fn(np, *a), *args, **kw)


_rng = np.random.default_rng(0)


def rand(*shape, dtype=np.float64, low=-2.0, high=2.0, seed=None):
    """Random array (or NumPy scalar for shape ()) of ``dtype`` in [low, high)."""
    rng = np.random.default_rng(seed) if seed is not None else _rng
    dtype = np.dtype(dtype)
    if dtype.kind == "c":  # real and imaginary parts each in [low, high)
        parts = rng.uniform(low, high, size=(2,) + shape)
        x = (parts[0] + 1j * parts[1]).astype(dtype)
    elif dtype.kind == "f":
        x = rng.uniform(low, high, size=shape).astype(dtype)
    elif dtype.kind in "iu":
        x = rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    elif dtype.kind == "b":
        x = rng.random(size=shape) < 0.5
    else:
        raise TypeError(dtype)
    return np.asarray(x)


def randpos(*shape, dtype=np.float64, low=0.1, high=3.0, seed=None):
    return rand(*shape, dtype=dtype, low=low, high=high, seed=seed)


def default_rtol(dtype) -> float:
    return {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-14, np.dtype(np.complex64): 2e-6,
            np.dtype(np.complex128): 1e-14}.get(np.dtype(dtype), 0.0)


def _leaves(x):
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out.extend(_leaves(v))
        return out
    return [x]


def assert_same(got, expected, rtol=None, atol=0.0, check_type=True, what="value"):
    """Compare like NumPy users would: type, shape, dtype, then values."""
    g_leaves, e_leaves = _leaves(got), _leaves(expected)
    assert len(g_leaves) == len(e_leaves), f"{what}: {len(g_leaves)} outputs, expected {len(e_leaves)}"
    for i, (g, e) in enumerate(zip(g_leaves, e_leaves)):
        where = f"{what}[{i}]" if len(g_leaves) > 1 else what
        if check_type:
            assert isinstance(g, (np.ndarray, np.generic)), f"{where}: got {type(g).__name__}, expected a NumPy value"
        g_arr, e_arr = np.asarray(g), np.asarray(e)
        assert g_arr.shape == e_arr.shape, f"{where}: shape {g_arr.shape}, expected {e_arr.shape}"
        assert g_arr.dtype == e_arr.dtype, f"{where}: dtype {g_arr.dtype}, expected {e_arr.dtype}"
        tol = default_rtol(e_arr.dtype) if rtol is None else rtol
        if e_arr.dtype.kind in "iub" or (tol == 0 and atol == 0):
            np.testing.assert_array_equal(g_arr, e_arr, err_msg=where)
        else:
            np.testing.assert_allclose(g_arr, e_arr, rtol=tol, atol=atol, equal_nan=True, err_msg=where)


def compiled_and_evaluated(fun, *args):
    """(compiled outputs, evaluated outputs) of ``make_jaxpr(fun)`` on ``args``: the
    lowering tests compare the two. The program must compile (no interpreter fallback)."""
    import warnings

    import funcgrad as fg
    from funcgrad.core.pytree import tree_flatten
    from funcgrad.lowering import Executable, compile_jaxpr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        closed = fg.make_jaxpr(fun)(*args)
        exe = compile_jaxpr(closed)
        assert isinstance(exe, Executable)
        leaves, _ = tree_flatten(args)
        return exe(*leaves), fg.eval_closed_jaxpr(closed, *leaves)


def fd_grad(f, x, eps=1e-6):
    """Central finite-difference gradient of a scalar function of a float64 array."""
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        out.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out



# The start of a child-process script that counts the programs it has LLVM optimise (none
# when everything comes from the disk cache): ``optimised`` gets one entry per compile.
CHILD_COUNTING_COMPILES = """\
import numpy as np
import funcgrad as fg, funcgrad.numpy as fnp
from funcgrad.lowering import engine
optimised = []
_real_optimised = engine._optimised
engine._optimised = lambda text, pto: optimised.append(1) or _real_optimised(text, pto)
"""


def ir_drive_loop(sym: str, ty: str, width: int | None, body: str = "") -> str:
    """LLVM IR of ``fg_main_drive(x, y, n)``: ``y[i] = sym(x[i])`` over ``n`` elements (or
    vectors of ``width`` lanes), declaring ``sym`` unless ``body`` defines it (the vector-math
    library tests drive the library's scalar and vector entries with it)."""
    vt = f"<{width} x {ty}>" if width else ty
    align = 4 if ty == "float" else 8
    decl = "" if body else f"declare {vt} @{sym}({vt})\n"
    return decl + body + f"""
define void @fg_main_drive(ptr %x, ptr %y, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %px = getelementptr {vt}, ptr %x, i64 %i
  %v = load {vt}, ptr %px, align {align}
  %r = call {vt} @{sym}({vt} %v)
  %py = getelementptr {vt}, ptr %y, i64 %i
  store {vt} %r, ptr %py, align {align}
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


def mlp_loss(params, x, y):
    """A two-layer tanh MLP's mean softmax cross-entropy (``params`` = (w1, b1, w2, b2), ``y``
    one-hot): the training-step program of the MLP tests."""
    import funcgrad.numpy as fnp

    w1, b1, w2, b2 = params
    h = fnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = fnp.max(logits, axis=1, keepdims=True)
    logp = logits - m - fnp.log(fnp.sum(fnp.exp(logits - m), axis=1, keepdims=True))
    return -fnp.sum(logp * y) / x.shape[0]


def unrolled_steps(n, w):
    """``n`` Python-unrolled steps cycling through four kinds of layer on a matrix ``x``
    (``tanh(x @ w)``, ``x*0.9 + sin(x)*0.1``, ``x - mean(x, 0)``, ``x / (1 + exp(-x))``),
    then ``sum(x**2)``: the program of ``bench/compile_scaling.py``."""
    import funcgrad.numpy as fnp

    def f(x):
        for i in range(n):
            k = i % 4
            if k == 0:
                x = fnp.tanh(x @ w)
            elif k == 1:
                x = x * 0.9 + fnp.sin(x) * 0.1
            elif k == 2:
                x = x - fnp.mean(x, 0)
            else:
                x = x / (1 + fnp.exp(-x))
        return fnp.sum(x ** 2)

    return f
