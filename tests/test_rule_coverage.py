"""Every primitive x every rule kind: implemented, or allow-listed with a reason.

Rule kinds whose interpreter has not landed yet are listed in PENDING with the issue
that adds them; when an interpreter lands, remove its kind from PENDING and this test
demands the rule for every primitive (or an ALLOWED_MISSING entry with a reason).
"""
import pytest

import funcgrad  # noqa: F401  (declares every primitive)
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
    # own small families on top.
    families = {
        "linalg": {"cholesky", "triangular_solve", "lu", "eigh", "qr", "svd"},
        "special": {"erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma"},
        "calls": {"jit_call", "custom_jvp_call", "custom_vjp_call", "checkpoint_call", "custom_lin"},
        "control": {"cond", "while", "scan"},
        "tape": {"while_tape", "tape_apply", "tape_split", "tape_zip", "tape_empty"},
    }
    extra = set().union(*families.values())
    core = sorted(set(PRIMITIVES) - extra)
    assert len(core) <= 80, core
    assert len(PRIMITIVES) <= 110, sorted(PRIMITIVES)
