"""Run generated programs in worker processes, so a compiler abort, a segfault or a hang
is reported as a crash of one program instead of ending the run.

Protocol: the parent writes one JSON job per line to a worker's stdin
(``{"seed": 7, "mutation": [...]}``); the worker answers ``BEGIN <check>`` before each
check and ``RESULT <json>`` at the end, on a private copy of its stdout (stray prints
from the program go to stderr). When a worker dies or times out, the last ``BEGIN``
names the check that crashed; the worker is replaced and the run goes on.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import os
import re
import selectors
import shutil
import subprocess
import sys
import tempfile
import time

from .checks import CHECKS

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(TESTS_DIR)
PROGRAMS_PER_WORKER = 150  # bounds the memory held by compiled code in one process
STATUSES = ("pass", "mismatch", "crash", "internal", "skip")


# ---------------------------------------------------------------------------------------
# The worker side.
# ---------------------------------------------------------------------------------------
def build(seed, mutation=()):
    """The program for ``seed`` with shrinking steps applied (see ``shrink``)."""
    from .gen import generate

    p = generate(seed)
    for step in mutation:
        if step[0] == "const":
            p = p.with_constant(step[1])
        elif step[0] == "outputs":
            p = p.with_outputs(step[1])
        p = p.without_dead()
    return p


def worker_main():
    import warnings

    import numpy as np

    from .checks import run_checks

    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the program's own output must not corrupt the protocol
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    for line in sys.stdin:
        job = json.loads(line)
        try:
            program = build(job["seed"], job.get("mutation", ()))
            run_checks(program, lambda name: proto.write(f"BEGIN {name}\n"), job.get("only"),
                       lambda name, r: proto.write(f"DONE {name} {json.dumps([r.status, r.detail])}\n"))
        except Exception as e:  # noqa: BLE001 - the generator itself failed
            proto.write(f"DONE generator {json.dumps(['internal', f'fuzz generator: {type(e).__name__}: {e}'])}\n")
        proto.write("RESULT\n")


# ---------------------------------------------------------------------------------------
# The parent side.
# ---------------------------------------------------------------------------------------
class Worker:
    def __init__(self, debug, cache_dir):
        self.log = tempfile.TemporaryFile()
        env = dict(os.environ, PYTHONPATH=TESTS_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
        # Programs run as users run them: the disk cache on (a worker links what earlier
        # workers compiled, and ``jit_vs_eager`` checks a program linked from it).
        env.pop("FUNCGRAD_NO_DISK_CACHE", None)
        env["FUNCGRAD_CACHE_DIR"] = cache_dir
        if debug:
            env["FUNCGRAD_DEBUG"] = "1"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from fuzz.runner import worker_main; worker_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, cwd=REPO_DIR,
            env=env, bufsize=0)
        self.buffer = b""
        self.job = self.check = None
        self.partial = {}
        self.started = 0.0
        self.done = 0
        self.log_start = 0

    def submit(self, job):
        self.job, self.check, self.started, self.partial = job, None, time.monotonic(), {}
        self.log.seek(0, 2)
        self.log_start = self.log.tell()
        self.proc.stdin.write((json.dumps(job) + "\n").encode())

    def read_lines(self):
        """The complete lines now available (unbuffered, so select() stays truthful);
        ``None`` at end of file."""
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [line.decode() for line in lines]

    def stderr_tail(self):
        self.log.seek(self.log_start)
        text = self.log.read().decode(errors="replace").strip().splitlines()
        return " | ".join(text[-3:])[-300:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()


def _crash_payload(worker: Worker, reason: str) -> dict:
    """The checks that finished keep their results; the running one crashed; the rest
    did not run."""
    payload = dict(worker.partial)
    crashed = worker.check if worker.check not in payload else None
    for name in CHECKS:
        if name in payload or (worker.job.get("only") and name not in worker.job["only"]):
            continue
        if name == crashed:
            payload[name] = ["crash", f"{reason}; stderr: {worker.stderr_tail()}"]
        else:
            payload[name] = ["skip", f"not run: {crashed or 'program setup'} crashed"]
    if crashed is None:
        payload["setup"] = ["crash", f"{reason}; stderr: {worker.stderr_tail()}"]
    return payload


def run_jobs(jobs, n_workers=1, timeout=120.0, debug=True, on_result=None, deadline=None):
    """Run ``jobs`` (dicts with ``seed`` and optional ``mutation``/``only``); yield
    ``(job, {check: [status, detail]})`` in completion order."""
    jobs = collections.deque(jobs)
    sel = selectors.DefaultSelector()
    workers = []
    # The workers' disk cache: the caller's FUNCGRAD_CACHE_DIR (the test run's own under
    # pytest), else a directory of this run's, so a long run never fills the user's cache.
    own_cache = None if os.environ.get("FUNCGRAD_CACHE_DIR") else tempfile.mkdtemp(prefix="funcgrad-fuzz-cache-")
    cache_dir = own_cache or os.environ["FUNCGRAD_CACHE_DIR"]

    def start():
        w = Worker(debug, cache_dir)
        workers.append(w)
        sel.register(w.proc.stdout, selectors.EVENT_READ, w)
        return w

    def retire(w):
        sel.unregister(w.proc.stdout)
        workers.remove(w)
        w.stop()

    def feed(w):
        if jobs and (deadline is None or time.monotonic() < deadline):
            w.submit(jobs.popleft())
        else:
            w.job = None

    try:
        for _ in range(max(1, min(n_workers, len(jobs)))):
            feed(start())
        while any(w.job is not None for w in workers):
            for key, _ in sel.select(timeout=1.0):
                w = key.data
                lines = w.read_lines()
                if lines is None:  # EOF: the worker died
                    code = w.proc.wait()
                    job, payload = w.job, _crash_payload(w, f"worker died (exit {code})")
                    retire(w)
                    yield job, payload
                    feed(start())
                    continue
                for line in lines:
                    if line.startswith("BEGIN "):
                        w.check = line.split()[1]
                    elif line.startswith("DONE "):
                        _, name, result = line.split(" ", 2)
                        w.partial[name] = json.loads(result)
                    elif line == "RESULT":
                        w.done += 1
                        yield w.job, w.partial
                        if w.done >= PROGRAMS_PER_WORKER:
                            retire(w)
                            w = start()
                        feed(w)
            for w in list(workers):
                if w.job is not None and time.monotonic() - w.started > timeout:
                    job, payload = w.job, _crash_payload(w, f"timeout after {timeout:.0f}s")
                    retire(w)
                    yield job, payload
                    feed(start())
    finally:
        for w in list(workers):
            retire(w)
        if own_cache is not None:
            shutil.rmtree(own_cache, ignore_errors=True)


@dataclasses.dataclass
class Failure:
    seed: int
    check: str
    status: str
    detail: str

    @property
    def klass(self):
        """Failures with the same status and message shape are one class, whichever
        checks saw them (one root cause usually shows in several)."""
        text = re.sub(r"^[^:]* vs [^:]*: |^jvp raises |only [\w()]+ raises |raises ", "", self.detail)
        text = re.sub(r"np\.\w+\(|[-+]?\d[\d.e+-]*|\[[^\]]*\]|\)|\(at .*", "", text)
        return (self.status, text[:80])


class Tally:
    def __init__(self):
        self.counts = {c: collections.Counter() for c in CHECKS}
        self.skips = {c: collections.Counter() for c in CHECKS}
        self.failures: list[Failure] = []
        self.programs = 0

    def add(self, seed, payload):
        self.programs += 1
        for check, (status, detail) in payload.items():
            if check not in self.counts:  # setup crash or generator failure
                self.failures.append(Failure(seed, check, status, detail))
                continue
            self.counts[check][status] += 1
            if status == "skip":
                self.skips[check][detail] += 1
            elif status != "pass":
                self.failures.append(Failure(seed, check, status, detail))

    def table(self) -> str:
        head = f"{'check':<18}{'programs':>9}{'passed':>8}{'mismatch':>9}{'crashes':>8}{'internal':>9}{'skipped':>8}"
        rows = [head]
        for c in CHECKS:
            n = self.counts[c]
            rows.append(f"{c:<18}{sum(n.values()):>9}{n['pass']:>8}{n['mismatch']:>9}{n['crash']:>8}"
                        f"{n['internal']:>9}{n['skip']:>8}")
        other = [f for f in self.failures if f.check not in self.counts]
        rows.append(f"programs: {self.programs}; crashes outside a check: {len(other)}")
        rows.append("skipped, by reason:")
        for c in CHECKS:
            for reason, k in self.skips[c].most_common():
                rows.append(f"  {c:<18} {k:>6}  {reason}")
        return "\n".join(rows)

    def classes(self):
        """``{class: [Failure, ...]}`` in order of first appearance."""
        groups = collections.OrderedDict()
        for f in self.failures:
            groups.setdefault(f.klass, []).append(f)
        return groups


def same_failure(payload, check, status):
    return payload.get(check, ["pass"])[0] == status


def shrink(seed, check, status, n_workers=1, timeout=120.0, debug=True):
    """Greedy shrinker: keep one output if that still fails, then replace statements by
    their reference values (constants) while the same check keeps failing the same way."""
    from .gen import generate

    def fails(mutation):
        for _, payload in run_jobs([{"seed": seed, "mutation": mutation, "only": [check]}],
                                   1, timeout, debug):
            return same_failure(payload, check, status)

    mutation = []
    outputs = generate(seed).outputs
    for out in outputs:
        if len(outputs) > 1 and fails(mutation + [["outputs", [out]]]):
            mutation.append(["outputs", [out]])
            break
    i = 0
    while i < len(build(seed, mutation).stmts):
        trial = mutation + [["const", i]]
        if not build(seed, mutation).stmts[i].const and fails(trial):
            mutation = trial
        else:
            i += 1
    return build(seed, mutation)
