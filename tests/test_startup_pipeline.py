"""The program pipeline's entry wrappers (``engine.WRAPPERS``): compiled without
optimisation (``optnone``), while the loops they call are still optimised and vectorised;
the values are those of eager code."""
import re

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.lowering import engine, tiered


def _attrs_of(ir: str, name: str) -> str:
    """The attributes of the definition of ``name`` in printed (optimised) IR."""
    m = re.search(r"^define [^\n]*@" + re.escape(name) + r"\([^\n]*#(\d+)", ir, re.M)
    assert m, name
    return re.search(r"^attributes #" + m.group(1) + r" = \{([^}]*)\}", ir, re.M).group(1)


def test_entry_wrappers_are_optnone_and_the_loop_is_vectorised():
    previous = tiered.set_mode("off")  # (the optimised code at once)
    try:
        engine._module_cache.clear()
        x = np.linspace(-1.0, 1.0, 1000)
        f = fg.jit(lambda a, b: fnp.sum(a * b) + (a - 0.5 * b) * 3.0)
        np.testing.assert_allclose(f(x, x[::-1].copy()), np.sum(x * x[::-1]) + (x - 0.5 * x[::-1]) * 3.0,
                                   rtol=1e-13)
        # (one module, possibly cached under both its text and its disk-cache object key)
        (mod,) = {id(m): m for m in list(engine._module_cache.values()) if "entry_ptrs" in m.addrs}.values()
        ir = mod.optimized
    finally:
        tiered.set_mode(previous)
    for name in engine.WRAPPERS:
        assert "optnone" in _attrs_of(ir, name).split()
    assert "optnone" not in _attrs_of(ir, "fg_main_core").split()
    assert re.search(r"<\d+ x double>", ir)  # (the loop vectoriser ran on the core)


def test_jit_of_scalar_and_mixed_arguments_matches_eager():
    # The wrappers unpack Python scalars, 0-d and n-d arrays of several dtypes.
    f = fg.jit(lambda a, s, i, v: (a * s + i, v.astype(np.float32) - s))
    args = (np.arange(6.0).reshape(2, 3), 1.5, 3, np.arange(4, dtype=np.int32))
    got, want = f(*args), (args[0] * 1.5 + 3, args[3].astype(np.float32) - np.float32(1.5))
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_array_equal(g, w)
