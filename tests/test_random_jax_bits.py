"""funcgrad.random gives JAX's random numbers: every sampler, eagerly and under ``jit``,
against a table of ``jax.random``'s outputs (JAX 0.10.2 with ``jax_enable_x64``) for
fixed keys, both raw ``PRNGKey`` keys and typed ``key`` keys. The table,
``tests/data/jax_random_fixtures.json``, is written by ``tools/random_fixtures.py`` (the
only place JAX is imported); this test reads only the table.

Integers, booleans and keys must be equal. Floats must agree to ``RTOL`` (float64:
1e-12; float32: 2e-6, some float32 ulps): funcgrad evaluates JAX's formulas in JAX's
order, but XLA's CPU compiler fuses ``a * b + c`` into one fused multiply-add (one
rounding where NumPy rounds twice), and its ``log``, ``log1p``, ``exp``, ``pow``, ``tan``,
``erf`` and ``lgamma`` differ from NumPy's (eager) and funcgrad's compiled ones (jit) by
an ulp or a few (its float64 ``log1p`` by up to ~130 ulps near ``sqrt(2) - 1``, which
moves ``normal`` by up to ~20 ulps). Measured: 87% of the float values are bit-equal, the
worst differ by ~150 ulps where a formula cancels (``wald`` at mean 10; ``dirichlet`` and
``loggamma`` at tiny concentrations, whose log-space values are large), far inside 1e-12.
A rejection sampler's accept/reject decisions could flip on a last-bit difference (a
value within an ulp of the boundary); no fixture does, and every integer output is equal.
Looser tolerances, each with its reason, are in ``LOOSER``.
"""
import json
import pathlib

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import random

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "jax_random_fixtures.json").read_text())
CASES = DATA["cases"]
# float32: ~16 ulps (measured: up to 6; compiled math differs a little between CPUs)
RTOL = {"float64": 1e-12, "float32": 2e-6, "complex128": 1e-12, "complex64": 2e-6}
# (function, dtype) -> (rtol, atol), and why
LOOSER = {
    # mean + factor @ z: the cancellation in the sum makes the error absolute, and the
    # factor (LAPACK's cholesky/eigh/svd) is computed in another order than XLA's
    "multivariate_normal": (1e-10, 1e-12),
    # QR by another LAPACK call order: entries agree to ~1e-15 absolutely
    "orthogonal": (1e-10, 1e-13),
}
# JAX's random names funcgrad does not have, and why
NOT_PROVIDED = {
    # an XLA primitive (gamma sampling with its own lowering); funcgrad's gamma is a
    # composite with a custom JVP, so there is no primitive to expose
    "random_gamma_p",
}


def _key(spec):
    return random.PRNGKey(spec["seed"]) if spec["kind"] == "raw" else random.key(spec["seed"])


def _decode(v):
    if isinstance(v, dict):
        if "tuple" in v:
            return tuple(v["tuple"])
        if "array" in v:
            return np.array(v["array"], v["dtype"])
        if "key" in v:
            return _key(v["key"])
    return v


def _expected(case):
    dt = np.dtype(case["dtype"])
    values = case["values"]
    if dt.kind == "c":
        values = [complex(re, im) for re, im in values]
    return np.array(values, dt).reshape(case["shape"])


def _run(case, jit):
    fn = getattr(random, case["fn"])
    args = [_decode(a) for a in case["args"]]
    kwargs = {k: _decode(v) for k, v in case["kwargs"].items()}
    key = _key(case["key"])
    out = fg.jit(lambda k: fn(k, *args, **kwargs))(key) if jit else fn(key, *args, **kwargs)
    if isinstance(out, random.KeyArray):
        out = random.key_data(out)
    return np.asarray(out)


def _case_id(i, case):
    return f"{i}-{case['fn']}-{case['key']['kind']}{case['key']['seed']}"


def _jit_rows():
    """Under jit, one call per sampler (compiling is the slow part, and the eager test
    covers every call): its first key, raw and typed keys in turn."""
    calls = {}
    for i, c in enumerate(CASES):
        calls.setdefault(c["fn"], []).append(i)
    kinds = ("raw", "typed")
    rows = []
    for n, idx in enumerate(calls.values()):
        rows.append(next((i for i in idx if CASES[i]["key"]["kind"] == kinds[n % 2]), idx[0]))
    return rows


JIT_ROWS = _jit_rows()


@pytest.mark.parametrize("case", CASES, ids=[_case_id(i, c) for i, c in enumerate(CASES)])
def test_matches_jax_eagerly(case):
    _check(case, _run(case, jit=False))


@pytest.mark.parametrize("case", [CASES[i] for i in JIT_ROWS], ids=[_case_id(i, CASES[i]) for i in JIT_ROWS])
def test_matches_jax_under_jit(case):
    _check(case, _run(case, jit=True))


def _check(case, got):
    want = _expected(case)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
        return
    rtol, atol = LOOSER.get(case["fn"], (RTOL[want.dtype.name], 0.0))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def test_every_sampler_is_in_the_table():
    samplers = {n for n in random.__all__ if n not in ("KeyArray", "PRNGKey", "key", "wrap_key_data",
                                                        "key_impl", "key_dtype")}
    assert samplers <= {c["fn"] for c in CASES}, samplers - {c["fn"] for c in CASES}


def test_names_cover_jax_random():
    jax_names = set(DATA["names"])
    missing = jax_names - set(dir(random))
    assert missing == NOT_PROVIDED, missing
    assert len(jax_names & set(dir(random))) / len(jax_names) >= 0.95


def test_key_introspection_matches_jax():
    k = random.key(3)
    assert random.key_impl(k) == random.key_impl(random.PRNGKey(3)) == "threefry2x32"
    assert k.dtype == random.key_dtype() == random.key_dtype("threefry2x32")
    assert np.array_equal(random.key_data(random.wrap_key_data(random.key_data(k), dtype=k.dtype)),
                          random.key_data(k))
    with pytest.raises(ValueError, match="rbg"):
        random.key(0, impl="rbg")
    with pytest.raises(TypeError, match="clone"):
        random.clone(np.zeros(3))
