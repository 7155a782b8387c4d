"""Compiled loop nests on several threads (issue #17): funcgrad's pool, the split
nests, and what is guaranteed — bitwise equal results for every thread count."""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config, lax
from funcgrad.lowering import parallel, threadpool

from harness import CHILD_COUNTING_COMPILES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rng = np.random.default_rng(7)


@pytest.fixture
def split_everything(monkeypatch):
    """Split every eligible nest, however small (so small test arrays take the threaded
    path), and restore the thread count afterwards."""
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 2)
    monkeypatch.setattr(parallel, "MIN_NS", 0)
    old = threadpool.set_num_threads(2)
    yield
    threadpool.set_num_threads(old)


def _run(f, *args, threads):
    threadpool.set_num_threads(threads)
    return [np.asarray(o) for o in fg.tree_util.tree_leaves(f(*args))]


def _same_for_all_thread_counts(f, *args):
    base = _run(f, *args, threads=1)
    for t in (2, 3, 4):
        for a, b in zip(base, _run(f, *args, threads=t)):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), t  # bitwise
    return base


def _logsumexp(m, x):
    mx = m.max(x, axis=1, keepdims=True)
    return m.log(m.sum(m.exp(x - mx), axis=1)) + mx[:, 0]


PROGRAMS = {
    "elementwise chain": (lambda m, x, y: m.sin(x) * y + m.exp(-x * x) * 0.5 - m.tanh(y), 2),
    "2-d map with broadcast": (lambda m, x, y: m.log1p(m.abs(x)) * y[:1] + x.T.T, 2),
    "logsumexp rows": (lambda m, x, y: _logsumexp(m, x), 1),
    "total sum": (lambda m, x, y: m.sum(x * y), 2),
    "total max and argument": (lambda m, x, y: m.max(m.exp(x)) + m.min(y), 2),
    "sum over leading axis (single-threaded)": (lambda m, x, y: m.sum(x * y, axis=0), 2),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_split_nests_equal_single_threaded_bitwise_and_eager(split_everything, name):
    fn, nargs = PROGRAMS[name]
    x, y = rng.normal(size=(37, 29)), rng.normal(size=(37, 29))
    args = (x, y)[:nargs] if nargs == 2 else (x,)
    f = fg.jit(lambda *a: fn(fnp, *a, *([None] * (2 - len(a)))))
    got = _same_for_all_thread_counts(f, *args)
    want = np.asarray(fn(np, *args, *([None] * (2 - len(args)))))
    assert got[0].dtype == want.dtype and got[0].shape == want.shape
    np.testing.assert_allclose(got[0], want, rtol=1e-13, atol=1e-13)


def test_large_programs_are_split_and_deterministic():
    # Default thresholds: these sizes are above them.
    x = rng.normal(size=200_000)
    f = fg.jit(lambda x: fnp.sum(fnp.exp(-x * x)))
    g = fg.jit(lambda x: fnp.tanh(x) * 2.0)
    from funcgrad.lowering import compile_jaxpr

    assert "@fg_par_run" in compile_jaxpr(fg.make_jaxpr(f)(x)).llvm_ir_unoptimized
    (s,) = _same_for_all_thread_counts(f, x)
    np.testing.assert_allclose(s, np.sum(np.exp(-x * x)), rtol=1e-13)
    (t,) = _same_for_all_thread_counts(g, x)
    np.testing.assert_allclose(t, np.tanh(x) * 2.0, rtol=1e-15)
    threadpool.set_num_threads(threadpool._default_threads())


def test_the_ir_names_the_pool_and_holds_no_addresses(split_everything):
    from funcgrad.lowering import compile_jaxpr

    x = np.linspace(-1, 1, 64)
    exe = compile_jaxpr(fg.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(x))
    text = exe.llvm_ir_unoptimized
    assert "call void @fg_par_run(ptr @fg_par" in text and "declare void @fg_par_run" in text
    assert "inttoptr" not in text  # (addresses are bound at link time, by name)
    np.testing.assert_allclose(exe(x)[0], np.sin(x) * 2.0, rtol=1e-15)


def test_control_flow_bodies_and_small_nests_stay_single_threaded(split_everything):
    from funcgrad.lowering import compile_jaxpr

    x = np.linspace(-1, 1, 64)

    def body(i, c):
        return fnp.sin(c) + 0.01 * i

    prog = fg.make_jaxpr(lambda x: lax.fori_loop(0, 3, body, x))(x)
    text = compile_jaxpr(prog).llvm_ir_unoptimized
    assert "fg_par_run" not in text
    got = fg.jit(lambda x: lax.fori_loop(0, 3, body, x))(x)
    want = x
    for i in range(3):
        want = np.sin(want) + 0.01 * i
    np.testing.assert_allclose(got, want, rtol=1e-15)


def test_debug_print_in_a_threaded_program_prints_once_and_whole(split_everything, capfd):
    x = np.arange(6.0)

    def f(x):
        y = fnp.exp(x) * 2.0
        fg.debug.print("y={y}", y=y)
        return fnp.sum(y * x)

    out = fg.jit(f)(x)
    printed = capfd.readouterr().out
    assert printed.count("y=") == 1 and "296.826318" in printed and printed.index("2.") < printed.index("296")
    np.testing.assert_allclose(out, np.sum(np.exp(x) * 2 * x), rtol=1e-14)


def test_pure_callback_next_to_split_nests(split_everything):
    x = rng.normal(size=100)

    def host(v):
        return np.cumsum(v)

    f = fg.jit(lambda x: fg.pure_callback(host, fg.ShapeDtypeStruct(x.shape, x.dtype), fnp.sin(x)) * 3.0)
    np.testing.assert_allclose(f(x), np.cumsum(np.sin(x)) * 3.0, rtol=1e-14)


def test_concurrent_python_threads_share_the_pool_safely():
    x = rng.normal(size=300_000)
    f = fg.jit(lambda x: fnp.sum(fnp.tanh(x) * fnp.exp(-x * x)))
    want = np.asarray(f(x))
    results, errors = [], []

    def worker():
        try:
            for _ in range(5):
                results.append(np.asarray(f(x)).tobytes())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not errors and len(results) == 15
    assert all(r == want.tobytes() for r in results)


def test_set_num_threads_checks_its_argument():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="set_num_threads"):
            threadpool.set_num_threads(bad)


def test_num_threads_setting_is_read_and_checked(monkeypatch):
    monkeypatch.setenv(config.NUM_THREADS, "3")
    assert threadpool._default_threads() == 3
    monkeypatch.setenv(config.NUM_THREADS, "zero")
    with pytest.raises(ValueError, match="FUNCGRAD_NUM_THREADS"):
        threadpool._default_threads()
    monkeypatch.delenv(config.NUM_THREADS)
    assert threadpool._default_threads() == len(os.sched_getaffinity(0))


CHILD = textwrap.dedent("""
    import os, sys, numpy as np
    import funcgrad as fg, funcgrad.numpy as fnp
    from funcgrad.lowering import threadpool
    x = np.linspace(-3, 3, 500_000)
    f = fg.jit(lambda x: fnp.sum(fnp.sin(x) * fnp.exp(-x * x)))
    v = np.asarray(f(x))
    pid = os.fork()  # the child has no workers: the pool must make new ones, not hang
    if pid == 0:
        os._exit(0 if np.asarray(f(x)).tobytes() == v.tobytes() else 3)
    _, status = os.waitpid(pid, 0)
    print(threadpool.num_threads(), v.tobytes().hex(), os.waitstatus_to_exitcode(status))
""")


@pytest.mark.parametrize("threads", ["1", "2"])
def test_environment_thread_count_and_fork(threads):
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCGRAD_NUM_THREADS=threads)
    res = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    n, value, child_rc = res.stdout.split()
    assert n == threads and child_rc == "0"
    x = np.linspace(-3, 3, 500_000)
    threadpool.set_num_threads(1)
    here = np.asarray(fg.jit(lambda x: fnp.sum(fnp.sin(x) * fnp.exp(-x * x)))(x))
    threadpool.set_num_threads(threadpool._default_threads())
    assert here.tobytes().hex() == value  # the same bits whatever the thread count


WARM_CHILD = CHILD_COUNTING_COMPILES + textwrap.dedent("""
    x = np.linspace(-3, 3, 400_000).reshape(400, 1000)
    f = fg.jit(lambda x: (fnp.tanh(x) * 2.0, fnp.sum(fnp.exp(-x * x), axis=1), fnp.sum(x * x)))
    print("".join(np.asarray(o).tobytes().hex() for o in f(x))[:4000], len(optimised))
""")


def test_threaded_programs_start_warm_from_the_disk_cache(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCGRAD_CACHE_DIR=str(tmp_path), FUNCGRAD_NUM_THREADS="2")
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    runs = []
    for _ in range(2):
        res = subprocess.run([sys.executable, "-c", WARM_CHILD], capture_output=True, text=True, env=env, timeout=300)
        assert res.returncode == 0, res.stderr
        runs.append(res.stdout.split())
    (cold, n_cold), (warm, n_warm) = runs
    assert int(n_cold) >= 1 and int(n_warm) == 0  # the pool and the program came from disk
    assert warm == cold


def test_threaded_programs_release_the_gil(split_everything):
    from funcgrad.lowering import compile_jaxpr

    x = np.linspace(-1, 1, 64)
    exe = compile_jaxpr(fg.make_jaxpr(lambda x: fnp.exp(x) + 1.0)(x))
    assert exe.stats["release_gil"] and "@PyEval_SaveThread" in exe.llvm_ir_unoptimized
    np.testing.assert_allclose(exe(x)[0], np.exp(x) + 1.0, rtol=1e-15)
