"""``python -m tests.fuzz --seeds 0:20000 --jobs 2``: the long differential fuzz run.

Prints counts per check (programs, passed, mismatches, crashes, internal errors, skipped
with reasons), then one entry per failure class: how many programs, their first seeds,
and a copy-pasteable repro of the first (shrunk with ``--shrink``).
``python -m tests.fuzz --repro 288 --check jit_grad_vs_grad`` prints one program's repro.
"""
import argparse
import os
import sys
import time

from .checks import CHECKS, repro
from .gen import DEFAULT_FEATURES, FEATURES, active_features
from .runner import Tally, build, run_jobs, same_failure, shrink


def parse_seeds(text):
    lo, _, hi = text.partition(":")
    return range(int(lo), int(hi)) if hi else [int(lo)]


def reproduces_alone(failure, args) -> bool:
    job = {"seed": failure.seed, "only": [failure.check]}
    for _, payload in run_jobs([job], 1, args.timeout, not args.no_debug):
        return same_failure(payload, failure.check, failure.status)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0:20000", help="a range lo:hi or one seed")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per program before it counts as a hang")
    ap.add_argument("--time-limit", type=float, default=None, help="stop submitting programs after this many seconds")
    ap.add_argument("--no-debug", action="store_true", help="do not type-check every jaxpr (FUNCGRAD_DEBUG)")
    ap.add_argument("--shrink", action="store_true", help="shrink the first program of each failure class")
    ap.add_argument("--show", type=int, default=50, help="failure classes to print with a repro")
    ap.add_argument("--repro", type=int, default=None, help="print the repro of one seed and exit")
    ap.add_argument("--check", choices=CHECKS, default="jit_vs_eager", help="the check --repro prints")
    ap.add_argument("--features", default=None,
                    help=f"generator features: names to add to the defaults ({', '.join(sorted(DEFAULT_FEATURES))}), "
                         f"-name to remove, all, none; known: {', '.join(FEATURES)} (sets FUZZ_FEATURES)")
    args = ap.parse_args(argv)
    if args.features is not None:  # (the workers inherit it)
        os.environ["FUZZ_FEATURES"] = args.features
    features = sorted(active_features())

    if args.repro is not None:
        print(repro(build(args.repro), args.check))
        return 0

    seeds = parse_seeds(args.seeds)
    deadline = time.monotonic() + args.time_limit if args.time_limit else None
    tally, t0 = Tally(), time.monotonic()
    for job, payload in run_jobs([{"seed": s} for s in seeds], args.jobs, args.timeout,
                                 not args.no_debug, deadline=deadline):
        tally.add(job["seed"], payload)
        if tally.programs % 200 == 0:
            print(f"[{time.monotonic() - t0:7.0f}s] {tally.programs} programs, "
                  f"{len(tally.failures)} failing checks", file=sys.stderr, flush=True)

    print(f"seeds {args.seeds}: {tally.programs} programs in {time.monotonic() - t0:.0f}s "
          f"with {args.jobs} worker(s); features: {', '.join(features) or 'none'}\n")
    print(tally.table())
    classes = tally.classes()
    print(f"\n{len(classes)} failure classes")
    for n, (klass, fails) in enumerate(classes.items()):
        first = fails[0]
        seeds = sorted({f.seed for f in fails})
        checks = sorted({f.check for f in fails}, key=lambda c: (CHECKS + (c,)).index(c))
        print(f"\n=== class {n}: {first.status} in {len(seeds)} programs ({', '.join(checks)}); seeds "
              f"{' '.join(map(str, seeds[:12]))}{' ...' if len(seeds) > 12 else ''}")
        print(f"    {first.detail}")
        if n < args.show and first.check in CHECKS:
            alone = reproduces_alone(first, args)
            print("    in a fresh process: " + ("fails the same way" if alone else
                  "passes (the failure depends on programs run before it in the same process)"))
            program = (shrink(first.seed, first.check, first.status, timeout=args.timeout,
                              debug=not args.no_debug) if args.shrink and alone else build(first.seed))
            print(repro(program, first.check))
    failed = sum(tally.counts[c][s] for c in CHECKS for s in ("mismatch", "crash", "internal"))
    return 1 if failed or len(tally.failures) else 0


if __name__ == "__main__":
    sys.exit(main())
