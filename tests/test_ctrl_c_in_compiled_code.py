"""Ctrl-C inside compiled code: SIGINT during a long compiled loop raises
``KeyboardInterrupt`` in the caller soon after (the loops poll a flag a native signal
handler sets), and the process stays usable. Each case runs in a subprocess that the
test interrupts from outside (as a terminal would); the subprocess timeout only guards
against a hang (before the fix these loops ran for minutes)."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = textwrap.dedent("""
    import signal, sys, time
    import numpy as np
    import funcgrad as fg
    import funcgrad.numpy as fnp
    from funcgrad import lax

    kind = sys.argv[1]
    handled = []
    if kind == "own_handler":  # a Python handler that does not raise: the call completes
        signal.signal(signal.SIGINT, lambda *a: handled.append(1))
    if kind == "reduction":  # 1e11 elements, split across the thread pool
        f = fg.jit(lambda s: fnp.sum(fnp.sin(fnp.arange(10**11) * 1e-9)) * s)
        small = None
    elif kind == "scan":
        f = fg.jit(lambda x: lax.scan(lambda c, _: (c * 0.5 + 1.0, None), x, None, length=10**11)[0])
        small = None
    else:
        f = fg.jit(lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0), (0, 0.0)))
        small = 5
    big = {"reduction": 1.0, "scan": 0.0, "while": 10**11, "own_handler": 3 * 10**8}[kind]
    if small is not None:
        assert f(small)[0] == 5  # compiled before the long call
    print("ready", flush=True)
    try:
        out = f(big)
        print("returned", np.asarray(out[0] if isinstance(out, tuple) else out).item(), len(handled), flush=True)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
    # the process is usable: the same function and a new one compute correctly
    g = fg.jit(lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0), (0, 0.0)))
    i, x = g(40)
    h = fg.jit(lambda x: fnp.sum(x * 2.0))(np.arange(10.0))
    print("after", int(i), float(x), float(h), flush=True)
""")


def _interrupt(kind, delay=1.0):
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.Popen([sys.executable, "-c", CHILD, kind], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)  # (a guard against a hang, not a timing check)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    return out.split("\n")


@pytest.mark.parametrize("kind", ["while", "scan", "reduction"])
def test_sigint_stops_a_long_compiled_loop(kind):
    lines = _interrupt(kind)
    assert lines[0] == "KeyboardInterrupt"
    assert lines[1] == f"after 40 {2.0 - 2.0 ** -39!r} 90.0"


def test_a_handler_that_returns_lets_the_call_finish():
    lines = _interrupt("own_handler", delay=0.3)
    assert lines[0] == "returned 300000000 1"  # run again from the start after the handler
    assert lines[1].startswith("after 40 ")
