"""Blob fuzzer: mutated, resealed export blobs must be rejected or run correctly.

``python -m tests.fuzz.blobs --cases 0:2000`` (the long run; the README's
fuzzing section) loads each case (``blob_mutate.mutated(seed)``) in a worker process:

- ``rejected``: ``deserialize`` raised ``ExportError`` (what a bad blob must do);
- ``accepted_ok``: it loaded, and the compiled call agrees with the jaxpr evaluator
  (NumPy: bounds-checked) on the same inputs, NaNs in the same places; ``accepted_interp``:
  the same, but jit ran the interpreter (a LoweringError: nothing was compiled);
- ``call_error``: it loaded, and both the compiled call and the evaluator raised a
  typed error (a loop that allocates beyond memory, ...);
- ``nonterminating``: it loaded, and the evaluator still ran after ``EVAL_SECONDS`` (a
  valid program whose loop never ends: the compiled code is not run);
- failures: ``mismatch`` (compiled != evaluator: garbage read from memory),
  ``internal`` (an exception other than ``ExportError`` from the loader, or an internal
  one from a call), ``crash`` (the worker died: a segfault, an abort) and ``hang``.

Inputs live at the end of a page followed by an inaccessible guard page (``mprotect``),
so reading past an input buffer is a crash, not a silent read; workers run with
``MALLOC_PERTURB_`` so stale heap bytes differ from any computed value. Exit status 1
when any case failed.
"""
from __future__ import annotations

import argparse
import collections
import ctypes
import json
import mmap
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(TESTS_DIR)
CASES_PER_WORKER = 200  # bounds what compiled code accumulates in one process
OK = ("rejected", "accepted_ok", "accepted_interp", "call_error", "nonterminating")
EVAL_SECONDS = 10.0
FAILED = ("mismatch", "internal", "crash", "hang")
INTERNAL = (AssertionError, KeyError, IndexError, AttributeError, NameError, UnboundLocalError, RecursionError,
            ZeroDivisionError, StopIteration, SystemError)


# --- the worker side -----------------------------------------------------------------------------
_keep: list = []  # guarded buffers stay mapped for the worker's lifetime


def guarded(arr: np.ndarray) -> np.ndarray:
    """A copy of ``arr`` ending exactly where an inaccessible page begins."""
    arr = np.asarray(arr, order="C")  # (not ascontiguousarray: it makes 0-d arrays 1-d)
    page = mmap.PAGESIZE
    pages = max(1, -(-arr.nbytes // page))
    buf = mmap.mmap(-1, (pages + 1) * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    if libc.mprotect(base + pages * page, page, 0) != 0:  # PROT_NONE
        raise OSError(ctypes.get_errno(), "mprotect")
    _keep.append(buf)
    out = np.frombuffer(buf, arr.dtype, arr.size, pages * page - arr.nbytes).reshape(arr.shape)
    out[...] = arr
    return out


def inputs_for(avals, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for a in avals:
        kind = a.dtype.kind
        if kind == "f":
            x = rng.normal(size=a.shape) + 0.5
        elif kind == "c":
            x = rng.normal(size=a.shape) + 1j * rng.normal(size=a.shape)
        elif kind == "b":
            x = rng.random(a.shape) < 0.5
        else:  # (out-of-range and negative indices too: clamping and fill modes must hold)
            x = rng.integers(-5 if kind == "i" else 0, 6, size=a.shape)
        out.append(guarded(np.asarray(x, a.dtype)))
    return out


def _same(got, want) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        if g.dtype.kind in "fc":
            if not np.allclose(g, w, rtol=1e-6, atol=1e-9, equal_nan=True):
                return False
        elif not np.array_equal(g, w):
            return False
    return True


class _Slow(BaseException):
    """Raised by the timer in the evaluator (not an Exception: nothing catches it on the way)."""


def _alarm(signum, frame):
    raise _Slow()


def run_case(seed: int, blobs: dict) -> dict:
    import funcgrad as fg
    from funcgrad.core.interpret import eval_jaxpr
    from funcgrad.errors import ExportError
    from funcgrad.transforms.jit import _Interpreted, _memo

    from .blob_mutate import mutated

    base, record, muts, blob = mutated(seed, blobs)
    info = {"seed": seed, "base": base, "record": record, "mutations": muts}

    def result(status, detail=""):
        return dict(info, status=status, detail=detail[:400])

    try:
        e = fg.deserialize(blob)
    except ExportError as err:
        return result("rejected", str(err).splitlines()[0])
    except Exception as err:  # noqa: BLE001
        return result("internal", f"deserialize raised {type(err).__name__}: {err}")
    for _ in range(record):
        e = e._vjp
    args = inputs_for(e.in_avals, seed)
    # The evaluator first, under a timer: a mutation can make a valid program loop forever
    # (a counter that counts down); then the compiled code (which runs to the end) is not run.
    signal.setitimer(signal.ITIMER_REAL, EVAL_SECONDS)
    try:
        want, want_err = eval_jaxpr(e.jaxpr.jaxpr, e.jaxpr.consts, *args), None
    except _Slow:
        return result("nonterminating", f"the evaluator ran more than {EVAL_SECONDS}s")
    except Exception as err:  # noqa: BLE001
        want, want_err = None, err
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        got, got_err = e._call_flat(list(args)), None
    except Exception as err:  # noqa: BLE001
        got, got_err = None, err
    for err in (got_err, want_err):
        if isinstance(err, INTERNAL):
            return result("internal", f"a call raised {type(err).__name__}: {err}")
    if got_err is not None or want_err is not None:
        if got_err is not None and want_err is not None:
            return result("call_error", f"{type(got_err).__name__}: {got_err}")
        return result("mismatch", f"compiled raised {got_err!r:.200}; evaluator raised {want_err!r:.200}")
    if not _same(got, want):
        return result("mismatch", f"compiled {[np.asarray(g).ravel()[:4] for g in got]} vs evaluator "
                                  f"{[np.asarray(w).ravel()[:4] for w in want]}")
    interp = isinstance(_memo(e.jaxpr).get("exe"), _Interpreted)
    return result("accepted_interp" if interp else "accepted_ok")


def worker_main():
    import warnings

    from .blob_mutate import BASES, base_blob

    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the program's own output must not corrupt the protocol
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    signal.signal(signal.SIGALRM, _alarm)
    blobs = {name: base_blob(name) for name in BASES}
    proto.write("READY\n")
    for line in sys.stdin:
        proto.write(json.dumps(run_case(int(line), blobs)) + "\n")


# --- the parent side -----------------------------------------------------------------------------
class Worker:
    def __init__(self):
        self.log = tempfile.TemporaryFile()
        env = dict(os.environ, PYTHONPATH=TESTS_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   MALLOC_PERTURB_="165")
        self.proc = subprocess.Popen([sys.executable, "-c", "from fuzz.blobs import worker_main; worker_main()"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, cwd=REPO_DIR,
                                     env=env, bufsize=0)
        self.buffer, self.done = b"", 0
        if self.read_line(300.0) != "READY":
            raise RuntimeError(f"blob fuzz worker failed to start: {self.stderr_tail()}")

    def read_line(self, timeout: float):
        """The next protocol line, or None if the worker died or timed out."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()

    def stderr_tail(self) -> str:
        self.log.seek(0)
        return " | ".join(self.log.read().decode(errors="replace").strip().splitlines()[-3:])[-300:]

    def run(self, seed: int, timeout: float) -> dict:
        self.proc.stdin.write(f"{seed}\n".encode())
        line = self.read_line(timeout)
        self.done += 1
        if line is not None:
            return json.loads(line)
        alive = self.proc.poll() is None
        self.stop()
        status = "hang" if alive else "crash"
        detail = f"timeout after {timeout:.0f}s" if alive else f"worker died (exit {self.proc.returncode})"
        from .blob_mutate import BASES

        return {"seed": seed, "base": sorted(BASES)[seed % len(BASES)], "status": status, "detail": f"{detail}; stderr: {self.stderr_tail()}"}

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def run_cases(seeds, timeout: float = 60.0):
    """Yield each case's result dict, one worker at a time (replaced when it dies, hangs
    or has run ``CASES_PER_WORKER`` cases)."""
    w = None
    try:
        for seed in seeds:
            if w is None:
                w = Worker()
            res = w.run(seed, timeout)
            if res["status"] in ("crash", "hang") or w.done >= CASES_PER_WORKER:
                w.stop()
                w = None
            yield res
    finally:
        if w is not None:
            w.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.blobs", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="0:2000", help="seeds lo:hi")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case before it counts as a hang")
    ap.add_argument("--show", type=int, default=20, help="failures to print")
    ap.add_argument("--verbose", action="store_true", help="print every case")
    args = ap.parse_args(argv)
    lo, _, hi = args.cases.partition(":")
    seeds = range(int(lo), int(hi)) if hi else [int(lo)]
    counts, by_base, failures, t0 = collections.Counter(), collections.defaultdict(collections.Counter), [], \
        time.monotonic()
    for res in run_cases(seeds, args.timeout):
        counts[res["status"]] += 1
        by_base[res.get("base", "?")][res["status"]] += 1
        if res["status"] in FAILED:
            failures.append(res)
        if args.verbose:
            print(json.dumps(res), flush=True)
    total = sum(counts.values())
    print(f"blob fuzz: {total} cases in {time.monotonic() - t0:.0f}s")
    for status in OK + FAILED:
        print(f"  {status:16s} {counts[status]}")
    for base in sorted(by_base):
        print(f"  {base:18s} " + ", ".join(f"{k} {v}" for k, v in sorted(by_base[base].items())))
    for res in failures[:args.show]:
        print("FAILED", json.dumps(res))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
