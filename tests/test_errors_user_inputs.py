"""Inputs a user passes by mistake, or in an unusual form, give the value or a typed error
naming the function, the argument and the fix: data of the other byte order, a str leaf
in an argument pytree, a pytree nested deeper than Python's recursion limit, a bad
numeric environment setting, a Python int beyond the array's integer range."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core.array import Array

_OTHER = ">" if sys.byteorder == "little" else "<"  # the byte order that is not native


# --- byte order: converted, as NumPy does --------------------------------------------------

@pytest.mark.parametrize("dt", ["f8", "f4", "i4", "i8", "c16", "u2"])
def test_other_byte_order_is_converted_eagerly_and_under_transforms(dt):
    native = (np.arange(1, 7) * 0.75).astype(dt) if dt[0] in "fc" else np.arange(1, 7).astype(dt)
    x = native.astype(_OTHER + dt)
    assert not x.dtype.isnative
    f = lambda v: fnp.sin(v) * 2 + v  # noqa: E731
    jf = fg.jit(f)
    # (each against the same path on native data: compiled code may fuse a multiply-add)
    for got, want in ((f(x), f(native)), (jf(x), jf(native)), (jf(x), jf(native)), (fg.vmap(f)(x), f(native))):
        assert type(got) is Array and got.dtype == want.dtype and got.dtype.isnative
        np.testing.assert_array_equal(got, want)
    if dt[0] == "f":
        np.testing.assert_array_equal(fg.grad(lambda v: fnp.sum(v ** 2))(x), 2 * native)
    np.testing.assert_array_equal(fnp.asarray(x), native)
    assert fnp.asarray(x).dtype.isnative


def test_other_byte_order_bits_are_the_values_bits():
    # primitives compute on native data: a bitcast sees the value's bits, not swapped ones
    x = np.arange(3.0).astype(_OTHER + "f8")
    want = np.arange(3.0).view(np.int64)
    for got in (lax.bitcast_convert_type(x, np.int64), fg.jit(lambda v: lax.bitcast_convert_type(v, np.int64))(x),
                fg.vmap(lambda v: lax.bitcast_convert_type(v, np.int64))(x)):
        np.testing.assert_array_equal(got, want)


# --- a non-array leaf: the function, the argument's key path, the fix -----------------------

def test_str_leaf_names_function_argument_path_and_fix():
    def loss(params):
        return params["w"] * 2.0

    p = {"w": 1.0, "name": "layer"}
    with pytest.raises(TypeError, match=r"jit\(loss\): argument 0 \('params'\), leaf \['name'\]: .*str.*static"):
        fg.jit(loss)(p)
    for t in (fg.grad, fg.vmap):
        with pytest.raises(TypeError, match=rf"{t.__name__}\(loss\): argument 0, leaf \['name'\]: .*str.*close over"):
            t(loss)(p if t is fg.grad else {"w": np.ones(2), "name": "layer"})
    with pytest.raises(TypeError, match=r"jvp: argument 0, leaf \['name'\]: .*str"):
        fg.jvp(loss, (p,), (p,))
    with pytest.raises(TypeError, match=r"vjp: argument 0, leaf \['name'\]: .*str"):
        fg.vjp(loss, p)
    with pytest.raises(TypeError, match=r"jit\(<lambda>\): argument 1 \('s'\): .*str"):
        fg.jit(lambda a, s: a)(1.0, "x")
    assert fg.jit(loss, static_argnums=0)  # (the fix the message names exists)


# --- pytrees deeper than the recursion limit --------------------------------------------------

def test_pytree_deeper_than_the_recursion_limit_works():
    deep = 1.5
    for _ in range(10_000):
        deep = [deep]
    leaf = lambda d: fg.tree_util.tree_leaves(d)[0]  # noqa: E731
    out = fg.jit(lambda d: d)(deep)
    assert fg.tree_util.tree_structure(out) == fg.tree_util.tree_structure(deep)
    assert fg.jit(lambda d: leaf(d) * 2)(deep) == 3.0
    assert fg.tree_util.tree_leaves(fg.grad(lambda d: leaf(d) ** 2)(deep)) == [3.0]
    assert fg.tree_util.tree_leaves(fg.vmap(lambda d: leaf(d) * 2)(fg.tree_util.tree_map(lambda _: np.ones(2), [deep])))
    assert fg.tree_util.tree_leaves(fg.tree_util.tree_map(lambda v: v + 1, deep)) == [2.5]
    for _ in range(3):  # (the native output program, once the plan is made)
        out = fg.jit(lambda s: fg.tree_util.tree_map(lambda _: s, deep))(2.0)
    assert fg.tree_util.tree_leaves(out) == [2.0]
    td = fg.tree_util.tree_structure(deep)
    assert hash(td) == hash(fg.tree_util.tree_structure(deep)) and repr(td).startswith("PyTreeDef([[[")
    assert td.num_nodes == 10_001


# --- numeric environment settings ----------------------------------------------------------------

@pytest.mark.parametrize("text", ["-5", "abc", "nan", "inf"])
def test_bad_cache_size_setting_warns_naming_variable_and_range(text, monkeypatch):
    from funcgrad.lowering import disk_cache

    monkeypatch.setenv("FUNCGRAD_CACHE_MAX_MB", text)
    with pytest.warns(RuntimeWarning, match=r"FUNCGRAD_CACHE_MAX_MB=.* is not valid: expected a size in MB, a number >= 0"):
        assert disk_cache.max_bytes() == 256 * 2**20
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per value, not once per store
        assert disk_cache.max_bytes() == 256 * 2**20
    for good, mb in (("0", 0), ("12.5", 12.5), ("", 256)):
        monkeypatch.setenv("FUNCGRAD_CACHE_MAX_MB", good)
        assert disk_cache.max_bytes() == int(mb * 2**20)


def test_bad_cache_size_setting_in_a_fresh_process_still_computes():
    env = {**os.environ, "FUNCGRAD_CACHE_MAX_MB": "-5"}
    code = "import funcgrad as fg, numpy as np; print(float(fg.jit(lambda x: x * 3.0)(np.float64(2.0))))"
    out = subprocess.run([sys.executable, "-W", "always", "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "6.0", out.stderr


# --- Python ints beyond the array's integer range ------------------------------------------------

def test_int_beyond_int64_is_numpys_overflow_error_naming_the_function():
    big = 2**70
    x = np.arange(3)
    cases = [
        ("add", lambda: fnp.add(x, big)), ("add", lambda: fnp.add.general(x, big)),
        ("maximum", lambda: fnp.maximum(x, big)), ("where", lambda: fnp.where(x > 0, x, big)),
        ("asarray", lambda: fnp.asarray(big)), ("full", lambda: fnp.full(3, big)),
        (r"Array\.__add__", lambda: fnp.asarray(x) + big), (r"Array\.__rmul__", lambda: big * fnp.asarray(x)),
        ("add", lambda: fg.jit(lambda v: v + big)(x)), ("add", lambda: fg.vmap(lambda v: v + big)(x)),
    ]
    for name, case in cases:
        with pytest.raises(OverflowError, match=rf"^{name}: Python integer {big} out of bounds for int64$"):
            case()
    with pytest.raises(OverflowError, match=rf"add: Python integer {2**65} out of bounds for uint64"):
        fnp.add(x.astype(np.uint64), 2**65)
    with pytest.raises(OverflowError, match=r"add: Python integer -1 out of bounds for uint64"):
        fnp.add(x.astype(np.uint64), -1)
    with pytest.raises(OverflowError, match=r"add: Python integer 300 out of bounds for int8"):
        fnp.add(x.astype(np.int8), 300)
    assert fnp.add(x.astype(np.uint64), 2**64 - 1).dtype == np.uint64  # (in range: fine)
    np.testing.assert_array_equal(fnp.multiply(np.arange(3.0), big), np.arange(3.0) * float(big))
