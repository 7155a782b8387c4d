"""Every primitive x every rule kind: implemented, or allow-listed with a reason.

The eager cotangent rule (``eager_vjp``) is optional: a primitive without one is
allow-listed with the reason, and the eager tape runs it through the general reverse mode.

Rule kinds whose interpreter has not landed yet are listed in PENDING with the issue
that adds them; when an interpreter lands, remove its kind from PENDING and this test
demands the rule for every primitive (or an ALLOWED_MISSING entry with a reason).
"""
import pathlib
import re

import numpy as np
import pytest

import funcgrad  # (declares every primitive)
import funcgrad.lowering  # noqa: F401  (registers lower rules and the not-yet-lowered list)
import funcgrad.transforms.control_flow  # noqa: F401
import funcgrad.transforms.jit  # noqa: F401
from funcgrad.core.primitive import ALLOWED_MISSING, PRIMITIVES, RULE_TABLES

PENDING: dict = {}


@pytest.mark.parametrize("kind", sorted(RULE_TABLES))
def test_every_primitive_has_every_rule(kind):
    if kind in PENDING:
        pytest.skip(f"{kind} rules arrive with the {PENDING[kind]}")
    table = RULE_TABLES[kind]
    missing = sorted(
        name for name, p in PRIMITIVES.items() if p not in table and name not in ALLOWED_MISSING[kind]
    )
    assert not missing, f"primitives without a {kind} rule (implement or allow-list with a reason): {missing}"


def test_allow_list_has_no_stale_entries():
    for kind, entries in ALLOWED_MISSING.items():
        stale = sorted(n for n in entries if PRIMITIVES[n] in RULE_TABLES[kind])
        assert not stale, f"{kind} rules exist for allow-listed primitives: {stale}"


def test_allow_list_reasons_are_given():
    for kind, entries in ALLOWED_MISSING.items():
        for name, reason in entries.items():
            assert name in PRIMITIVES, f"ALLOWED_MISSING[{kind}] names unknown primitive {name}"
            assert len(reason) > 10, f"give a real reason for {kind}/{name}"


def test_primitive_count_stays_small():
    # DESIGN.md: aim for about 60-80 primitives for the array language; control flow,
    # custom rules, linear algebra, special functions and the reverse-mode tape add their
    # own small families on top. (82: log2/log10 are primitives so their values are the C
    # library's, NumPy's, not log(x)/ln b, which is up to 2 ulp off: log10(1000) == 3.
    # 86: real, imag, conj, complex (issue #16): the linear maps between complex and
    # real values, each with the transpose JAX's derivative convention needs.)
    families = {
        "linalg": {"cholesky", "triangular_solve", "lu", "eigh", "qr", "svd", "eig"},
        # eager only (NumPy's LAPACK on concrete values; traced code uses lu): never staged
        "linalg_eager": {"solve", "slogdet"},
        "special": {"erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma"},
        "calls": {"jit_call", "custom_jvp_call", "custom_vjp_call", "checkpoint_call", "custom_lin", "custom_vmap_call"},
        "control": {"cond", "while", "scan"},
        "tape": {"while_tape", "tape_apply", "tape_split", "tape_zip", "tape_empty"},
        "collectives": {"psum", "pmax", "pmin", "all_gather"},
        "effects": {"callback"},
    }
    extra = set().union(*families.values())
    core = sorted(set(PRIMITIVES) - extra)
    assert len(core) <= 86, core
    assert len(PRIMITIVES) <= 121, sorted(PRIMITIVES)  # (custom_vmap_call; the two eager-only linalg ones)


# --- family helpers take parameters, never test names (DESIGN 2.2) ----------------------------
_SRC = pathlib.Path(funcgrad.__file__).parent
# Other modules of lowering/ are rewritten by the control-flow work (call-like primitives).
_NAME_SWITCH_FREE = sorted((_SRC / "core" / "prims").glob("*.py")) + [
    p for p in sorted((_SRC / "lowering").glob("*.py")) if p.name not in ("control_flow.py", "tapes.py", "pending.py")
]
_NAME_SWITCH = re.compile(r"\bname\s*(==|!=)|(?<!for )\bname\s+in\s*\(|\.name\s+in\b|PRIMITIVES\[\"|getattr\(\w+,\s*f\"")


@pytest.mark.parametrize("path", _NAME_SWITCH_FREE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_switch_on_primitive_names(path):
    hits = [f"{path.name}:{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if _NAME_SWITCH.search(line)]
    assert not hits, "switch on a parameter or attribute of the primitive instead:\n" + "\n".join(hits)


def test_a_new_reduction_gets_its_dtype_from_its_parameters():
    from funcgrad.core.prims import elementwise as ew
    from funcgrad.core.prims import reductions as rd

    prim = rd.reduction("test_reduce_mul", np.multiply, "if", combiner=ew.mul_p, identity=lambda d: d.type(1),
                        keep_int_dtype=True)
    try:
        x = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
        eager = prim.bind(x, axes=(1,))
        staged = funcgrad.make_jaxpr(lambda v: prim.bind(v, axes=(1,)))(x).jaxpr.outvars[0].aval
        assert eager.dtype == staged.dtype == np.int32
        np.testing.assert_array_equal(eager, [6, 120])
    finally:  # undeclare it, so the coverage tests above do not see it
        del PRIMITIVES[prim.name]
        for table in RULE_TABLES.values():
            table.pop(prim, None)
        for entries in ALLOWED_MISSING.values():
            entries.pop(prim.name, None)
