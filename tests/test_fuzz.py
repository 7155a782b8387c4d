"""The differential fuzzer (tests/fuzz/) over a fixed seed range: each random program is
checked eager vs NumPy, eager vs eval_jaxpr vs jit, grad vs jvp vs central differences,
vmap vs a loop, jit(grad) and grad(jit) vs grad, in worker processes (a compiler abort
is a reported crash). The long run is ``python -m tests.fuzz --seeds 0:20000 --jobs 2``.
"""
import pytest

from fuzz.checks import CHECKS, repro
from fuzz.gen import FEATURES, FG, NP, active_features, generate
from fuzz.runner import Tally, build, run_jobs

# (with the generator's default features, ``fuzz.gen.DEFAULT_FEATURES``)
CI_SEEDS = range(0, 200)  # about a minute with two workers on a 2-core machine
MAX_REPROS = 5  # failure classes whose repro source goes into the message


@pytest.fixture(scope="module")
def fuzz_tally():
    tally = Tally()
    for job, payload in run_jobs([{"seed": s} for s in CI_SEEDS], n_workers=2, timeout=120.0):
        tally.add(job["seed"], payload)
    return tally


def failure_report(tally: Tally, checks) -> str:
    parts = []
    classes = [(k, [f for f in fs if f.check in checks]) for k, fs in tally.classes().items()]
    classes = [(k, fs) for k, fs in classes if fs]
    for n, (_, fails) in enumerate(classes):
        first = fails[0]
        seeds = sorted({f.seed for f in fails})
        parts.append(f"--- {first.status} in seeds {seeds} ({first.check}): {first.detail}")
        if n < MAX_REPROS:
            parts.append(repro(build(first.seed), first.check))
    return "\n".join(parts)


def test_every_program_ran(fuzz_tally):
    assert fuzz_tally.programs == len(CI_SEEDS)
    setup = [f for f in fuzz_tally.failures if f.check not in CHECKS]
    assert not setup, "\n".join(f"seed {f.seed}: {f.check} {f.status}: {f.detail}" for f in setup)


@pytest.mark.parametrize("check", CHECKS)
def test_fuzz_check(fuzz_tally, check):
    counts = fuzz_tally.counts[check]
    bad = counts["mismatch"] + counts["crash"] + counts["internal"]
    assert bad == 0, (f"{check}: {counts['mismatch']} mismatches, {counts['crash']} crashes, "
                      f"{counts['internal']} internal errors in {sum(counts.values())} programs\n"
                      + failure_report(fuzz_tally, {check}))


def _uses(program, feature) -> bool:
    body = "\n".join(st.term.render(FG) for st in program.stmts)
    names = [name for name, _ in program.used_defs(FG, body)]
    if feature == "nonfinite":
        return any(st.term.special for st in program.stmts)
    if feature == "inner_linalg":
        return "linalg.det" in "\n".join(text for _, text in program.used_defs(FG, body))
    prefix = {"zero_size": "Z", "nested_jit": "K", "export_call": "E"}[feature]
    return any(n.startswith(prefix) for n in names)


@pytest.mark.parametrize("feature", FEATURES)
def test_each_feature_makes_programs_that_use_it(feature):
    on = {feature} | ({"nested_jit"} if feature == "inner_linalg" else set())  # (a variant of nested_jit)
    programs = [generate(seed, on) for seed in range(40)]
    using = [p for p in programs if _uses(p, feature)]
    assert len(using) >= 4, f"{feature}: {len(using)} of 40 programs use it"
    if feature != "nonfinite":  # definitions ahead of f, in both renderings
        for p in using[:3]:
            for style in (FG, NP):
                assert p.source(style).index("def f(") > 0
    assert not any(_uses(generate(seed, set()), feature) for seed in range(40))


def test_feature_switch_parses():
    assert active_features("none") == frozenset()
    assert active_features("all") == frozenset(FEATURES)
    assert active_features("none,nonfinite") == {"nonfinite"}
    assert "zero_size" not in active_features("-zero_size")
    with pytest.raises(ValueError, match="unknown fuzz feature"):
        active_features("nope")
