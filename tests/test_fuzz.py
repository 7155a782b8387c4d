"""The differential fuzzer (tests/fuzz/) over a fixed seed range: each random program is
checked eager vs NumPy, eager vs eval_jaxpr vs jit, grad vs jvp vs central differences,
vmap vs a loop, jit(grad) and grad(jit) vs grad, in worker processes (a compiler abort
is a reported crash). The long run is ``python -m tests.fuzz --seeds 0:20000 --jobs 2``.
"""
import pytest

from fuzz.checks import CHECKS, repro
from fuzz.runner import Tally, build, run_jobs

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
