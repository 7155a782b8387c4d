"""The cost of Ctrl-C polling in compiled loops (``lowering/interrupt.py``) on the jit
suite's W2 (elementwise chain), W6 (``while_loop`` Newton sqrt) and W7 (``scan`` RNN)
rows: each workload compiled twice in one process, with the polls (as shipped) and
without them, and the two timed in alternation.

    python bench/interrupt_cost.py [ROUNDS]                # timed, default 31 rounds
    python bench/interrupt_cost.py --callgrind [ROW ...]   # instruction counts (valgrind)

"Without" is made by the bench alone: while its copy compiles, every function builder
is non-interruptible (``FunctionBuilder.interruptible`` stays False), so its loops
neither poll the flag nor run in blocks; the IR text of each compile is checked (the
copy without polls never reads ``@fg_interrupt``; a row whose shipped code polls
nowhere is marked "no poll": its two copies are the same code). The disk cache and
tiered compilation are off (each copy is compiled here, optimised at once), one thread.

Each round times both copies back to back, in an order that alternates from round to
round, as the calling thread's CPU time over a batch of calls; the figure is the median
over rounds of the per-round ratio (with polls / without), with its quartiles. Load
that changes slowly affects both copies of a round alike, so the ratio stays steady
where the times themselves drift.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

os.environ.update(FUNCGRAD_NO_DISK_CACHE="1", FUNCGRAD_NO_TIERED_COMPILE="1", FUNCGRAD_NUM_THREADS="1",
                  OPENBLAS_NUM_THREADS="1")

import numpy as np  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
from funcgrad import lax  # noqa: E402
from funcgrad.lowering import builder, engine  # noqa: E402


def workloads():
    """[(name, make a fresh function, args, calls per batch)]."""
    rng = np.random.default_rng(0)
    out = []
    for n, num in ((1_000, 400), (100_000, 10), (10_000_000, 1)):
        x, y = rng.normal(size=n), rng.normal(size=n)
        out.append((f"W2 n={n:.0e}", lambda: fg.jit(lambda x, y: fnp.sin(x) * y + fnp.exp(-x * x) * 0.5 - fnp.tanh(y)),
                    (x, y), num))
    a = rng.uniform(0.5, 100.0, size=100_000)

    def newton():
        return fg.jit(lambda a: lax.while_loop(lambda x: fnp.max(fnp.abs(x * x - a) - 1e-12 * a) > 0,
                                               lambda x: 0.5 * (x + a / x), a))

    out.append(("W6 newton while_loop", newton, (a,), 3))
    W, xs = rng.normal(size=(64, 64)) * 0.1, rng.normal(size=(1000, 64))

    def rnn(W, xs):
        return fnp.sum(lax.scan(lambda h, x: (fnp.tanh(W @ h + x), None), np.zeros(64), xs)[0])

    out.append(("W7 rnn scan forward", lambda: fg.jit(rnn), (W, xs), 5))
    out.append(("W7 rnn scan gradient", lambda: fg.jit(fg.grad(rnn)), (W, xs), 3))
    return out


_texts: list = []
_real_compile_module = engine.compile_module


def _recording_compile(text, *args, **kwargs):
    _texts.append(text)
    return _real_compile_module(text, *args, **kwargs)


def compiled(make, args, polls: bool):
    """A fresh jitted function, called once (compiled); and whether its code polls."""
    saved = builder.FunctionBuilder.__dict__.get("interruptible")
    if not polls:
        builder.FunctionBuilder.interruptible = property(lambda self: False, lambda self, value: None)
    _texts.clear()
    engine.compile_module = _recording_compile
    try:
        f = make()
        f(*args)
    finally:
        engine.compile_module = _real_compile_module
        if not polls:
            if saved is None:
                del builder.FunctionBuilder.interruptible
            else:
                builder.FunctionBuilder.interruptible = saved
    if not _texts:
        raise RuntimeError("the function was not compiled here (a cache answered): no comparison")
    polled = any("@fg_interrupt" in t for t in _texts)
    if not polls and polled:
        raise RuntimeError("the copy without polls reads the interrupt flag: the switch no longer works")
    return f, polled


def batch(f, args, number) -> float:
    t = time.thread_time()
    for _ in range(number):
        f(*args)
    return (time.thread_time() - t) / number


_CG_HELPER = """#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void cg_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
"""


def child(name: str, polls: bool, calls: int) -> None:
    """Under callgrind (instrumentation and collection off): compile ``name``'s copy, then
    count ``calls`` calls alone (callgrind's client requests, from a helper built with
    ``cc``: the count is those calls' instructions and the two toggles')."""
    import ctypes
    import subprocess
    import tempfile

    make, args = next((m, a) for n, m, a, _ in workloads() if n == name)
    f, polled = compiled(make, args, polls)
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/cg.c", "w") as fh:
            fh.write(_CG_HELPER)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", f"{d}/cg.so", f"{d}/cg.c"], check=True)
        cg = ctypes.CDLL(f"{d}/cg.so")
    cg.cg_start()
    f(*args)  # (the code translated by valgrind, its caches warm)
    cg.cg_toggle()
    for _ in range(calls):
        f(*args)
    cg.cg_toggle()
    print(f"polled={polled}", flush=True)
    os._exit(0)


def main_callgrind(names) -> None:
    """Each row's two copies in processes of their own under callgrind; instructions per
    call (load-independent; valgrind's virtual CPU has no AVX-512, so the code is AVX2)."""
    import re
    import subprocess
    import tempfile

    print("Ctrl-C polls: instructions per call with / without them (callgrind), 1 thread")
    for name, _, _, number in workloads():
        if names and not any(n in name for n in names):
            continue
        counts, polled = {}, False
        for mode in ("on", "off"):
            with tempfile.TemporaryDirectory() as d:
                out = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
                                      f"--callgrind-out-file={d}/cg.out", sys.executable, __file__, "--child",
                                      name, mode, str(number)], capture_output=True, text=True, check=True)
            counts[mode] = int(re.search(r"Collected : (\d+)", out.stderr).group(1)) / number
            if mode == "on":
                polled = "polled=True" in out.stdout
        note = "" if polled else "   (no poll: same code)"
        print(f"  {name:22s} {counts['on']:14,.0f} {counts['off']:14,.0f} "
              f"{100 * (counts['on'] / counts['off'] - 1):+7.3f} %{note}", flush=True)


def main():
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2], sys.argv[3] == "on", int(sys.argv[4]))
    if sys.argv[1:2] == ["--callgrind"]:
        return main_callgrind(sys.argv[2:])
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 31
    print(f"Ctrl-C polls: CPU time per call with / without them, {rounds} alternating rounds, 1 thread")
    print(f"  {'row':22s} {'with (ms)':>10s} {'without':>10s} {'ratio: median [quartiles]':>30s}")
    for name, make, args, number in workloads():
        off, _ = compiled(make, args, polls=False)
        on, polled = compiled(make, args, polls=True)
        np.testing.assert_allclose(np.asarray(on(*args)), np.asarray(off(*args)), rtol=1e-12)
        for f in (on, off):  # (warm: caches, workspace)
            batch(f, args, number)
        t_on, t_off, ratios = [], [], []
        for r in range(rounds):
            order = (on, off) if r % 2 == 0 else (off, on)
            ts = {id(f): batch(f, args, number) for f in order}
            t_on.append(ts[id(on)])
            t_off.append(ts[id(off)])
            ratios.append(ts[id(on)] / ts[id(off)])
        q1, med, q3 = statistics.quantiles(ratios, n=4)
        note = "" if polled else "   (no poll: same code)"
        print(f"  {name:22s} {statistics.median(t_on) * 1e3:10.3f} {statistics.median(t_off) * 1e3:10.3f} "
              f"{100 * (med - 1):+9.2f} % [{100 * (q1 - 1):+6.2f}, {100 * (q3 - 1):+6.2f}]{note}", flush=True)


if __name__ == "__main__":
    main()
