"""funcgrad's own thread pool: native worker threads, written in LLVM IR, created once
per process, which compiled loop nests split their outer range across.

``@fg_par_run(fn, env, nchunks)`` runs ``fn(env, c)`` for every chunk ``c`` in
``[0, nchunks)``: the calling thread and the workers take chunks from one atomic
counter, so a core that other processes keep busy simply takes fewer chunks. Callers
split work so that the result does not depend on which thread runs which chunk (see
``parallel.py``). The workers never touch Python: compiled code calls ``fg_par_run``
with the GIL already released (``dispatch.tuple_entry``).

- Threads: ``FUNCGRAD_NUM_THREADS`` (default: the CPUs this process may run on,
  ``os.sched_getaffinity``), read when the pool is first used; ``set_num_threads(n)``
  changes it at run time (1: everything runs on the calling thread). Workers are
  pthreads made on demand and kept for the life of the process (they sleep on a
  condition variable between jobs).
- One job at a time: a call finding the pool busy (another Python thread's compiled
  code is using it) runs its chunks itself, serially, rather than waiting.
- After ``os.fork()`` the child has no workers: the pool forgets them and makes new
  ones when next used.

The mutex and condition variables are opaque 512-byte slots (glibc needs 40 and 48
bytes, macOS 64 and 48), initialised by ``pthread_mutex_init``/``pthread_cond_init``.
"""
from __future__ import annotations

import ctypes
import os
import threading

from funcgrad import config
from funcgrad.lowering import engine

__all__ = ["num_threads", "set_num_threads", "ensure_pool", "RUN_DECL"]

RUN_DECL = "declare void @fg_par_run(ptr, ptr, i64) nounwind"
MAX_THREADS = 256

_POOL_IR = r"""
@mu = internal global [64 x i64] zeroinitializer, align 64
@cv_work = internal global [64 x i64] zeroinitializer, align 64
@cv_done = internal global [64 x i64] zeroinitializer, align 64
@job_fn = internal global ptr null, align 8
@job_env = internal global ptr null, align 8
@job_n = internal global i64 0, align 8
@next = internal global i64 0, align 64
@gen = internal global i64 0, align 64
@want = internal global i64 0, align 8
@remaining = internal global i64 0, align 8
@nworkers = internal global i64 0, align 8
@nthreads = internal global i64 1, align 8
@busy = internal global i32 0, align 64

declare i32 @pthread_mutex_init(ptr, ptr) nounwind
declare i32 @pthread_mutex_lock(ptr) nounwind
declare i32 @pthread_mutex_unlock(ptr) nounwind
declare i32 @pthread_cond_init(ptr, ptr) nounwind
declare i32 @pthread_cond_wait(ptr, ptr) nounwind
declare i32 @pthread_cond_broadcast(ptr) nounwind
declare i32 @pthread_cond_signal(ptr) nounwind
declare i32 @pthread_create(ptr, ptr, ptr, ptr) nounwind
declare i32 @pthread_detach(i64) nounwind

define void @fg_main_pool_init() nounwind {
entry:
  call i32 @pthread_mutex_init(ptr @mu, ptr null)
  call i32 @pthread_cond_init(ptr @cv_work, ptr null)
  call i32 @pthread_cond_init(ptr @cv_done, ptr null)
  store i64 0, ptr @nworkers
  store i32 0, ptr @busy
  ret void
}

; take chunks until none is left
define internal void @run_chunks(ptr %fn, ptr %env, i64 %n) nounwind {
entry:
  br label %loop
loop:
  %c = atomicrmw add ptr @next, i64 1 monotonic
  %more = icmp slt i64 %c, %n
  br i1 %more, label %body, label %done
body:
  call void %fn(ptr %env, i64 %c)
  br label %loop
done:
  ret void
}

define internal ptr @worker(ptr %arg) nounwind {
entry:
  %a = ptrtoint ptr %arg to i64
  %me = and i64 %a, 65535
  %born = lshr i64 %a, 16
  br label %wait
wait:
  %seen = phi i64 [%born, %entry], [%g, %finished]
  call i32 @pthread_mutex_lock(ptr @mu)
  br label %check
check:
  %g = load i64, ptr @gen
  %same = icmp eq i64 %g, %seen
  br i1 %same, label %sleep, label %woken
sleep:
  call i32 @pthread_cond_wait(ptr @cv_work, ptr @mu)
  br label %check
woken:
  %w = load i64, ptr @want
  %fn = load ptr, ptr @job_fn
  %env = load ptr, ptr @job_env
  %n = load i64, ptr @job_n
  call i32 @pthread_mutex_unlock(ptr @mu)
  %mine = icmp slt i64 %me, %w
  br i1 %mine, label %work, label %finished
work:
  call void @run_chunks(ptr %fn, ptr %env, i64 %n)
  call i32 @pthread_mutex_lock(ptr @mu)
  %r = load i64, ptr @remaining
  %r1 = sub i64 %r, 1
  store i64 %r1, ptr @remaining
  %last = icmp eq i64 %r1, 0
  br i1 %last, label %signal, label %unlock
signal:
  call i32 @pthread_cond_signal(ptr @cv_done)
  br label %unlock
unlock:
  call i32 @pthread_mutex_unlock(ptr @mu)
  br label %finished
finished:
  br label %wait
}

; set the thread count (>= 1) and make workers up to it; returns the workers made
define i64 @fg_main_pool_set(i64 %t) nounwind {
entry:
  store atomic i64 %t, ptr @nthreads monotonic, align 8
  %tid = alloca i64, align 8
  call i32 @pthread_mutex_lock(ptr @mu)
  br label %loop
loop:
  %k = load i64, ptr @nworkers
  %need = sub i64 %t, 1
  %more = icmp slt i64 %k, %need
  br i1 %more, label %make, label %done
make:
  %gnow = load i64, ptr @gen
  %gsh = shl i64 %gnow, 16
  %packed = or i64 %gsh, %k
  %arg = inttoptr i64 %packed to ptr
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @worker, ptr %arg)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %made, label %done
made:
  %id = load i64, ptr %tid
  call i32 @pthread_detach(i64 %id)
  %k1 = add i64 %k, 1
  store atomic i64 %k1, ptr @nworkers monotonic, align 8
  br label %loop
done:
  %have = load i64, ptr @nworkers
  call i32 @pthread_mutex_unlock(ptr @mu)
  ret i64 %have
}

define void @fg_main_par_run(ptr %fn, ptr %env, i64 %n) nounwind {
entry:
  %t = load atomic i64, ptr @nthreads monotonic, align 8
  %nw = load atomic i64, ptr @nworkers monotonic, align 8
  %tm1 = sub i64 %t, 1
  %w0 = call i64 @llvm.smin.i64(i64 %tm1, i64 %nw)
  %nm1 = sub i64 %n, 1
  %w = call i64 @llvm.smin.i64(i64 %w0, i64 %nm1)
  %some = icmp sgt i64 %w, 0
  br i1 %some, label %try, label %serial
try:
  %was = atomicrmw xchg ptr @busy, i32 1 acquire
  %free = icmp eq i32 %was, 0
  br i1 %free, label %publish, label %serial
publish:
  call i32 @pthread_mutex_lock(ptr @mu)
  %nwl = load i64, ptr @nworkers
  %wl = call i64 @llvm.smin.i64(i64 %w, i64 %nwl)
  %still = icmp sgt i64 %wl, 0
  br i1 %still, label %go, label %giveup
giveup:
  call i32 @pthread_mutex_unlock(ptr @mu)
  store atomic i32 0, ptr @busy release, align 4
  br label %serial
go:
  store ptr %fn, ptr @job_fn
  store ptr %env, ptr @job_env
  store i64 %n, ptr @job_n
  store i64 0, ptr @next
  store i64 %wl, ptr @want
  store i64 %wl, ptr @remaining
  %g = load i64, ptr @gen
  %g1 = add i64 %g, 1
  store i64 %g1, ptr @gen
  call i32 @pthread_cond_broadcast(ptr @cv_work)
  call i32 @pthread_mutex_unlock(ptr @mu)
  call void @run_chunks(ptr %fn, ptr %env, i64 %n)
  call i32 @pthread_mutex_lock(ptr @mu)
  br label %check
check:
  %r = load i64, ptr @remaining
  %all = icmp eq i64 %r, 0
  br i1 %all, label %joined, label %sleep
sleep:
  call i32 @pthread_cond_wait(ptr @cv_done, ptr @mu)
  br label %check
joined:
  call i32 @pthread_mutex_unlock(ptr @mu)
  store atomic i32 0, ptr @busy release, align 4
  ret void
serial:
  br label %sloop
sloop:
  %c = phi i64 [0, %serial], [%c1, %sbody]
  %more = icmp slt i64 %c, %n
  br i1 %more, label %sbody, label %sdone
sbody:
  call void %fn(ptr %env, i64 %c)
  %c1 = add i64 %c, 1
  br label %sloop
sdone:
  ret void
}

declare i64 @llvm.smin.i64(i64, i64)
"""

_lock = threading.Lock()
_state: dict = {}


def _default_threads() -> int:
    text = config.setting(config.NUM_THREADS).strip()
    if text:
        try:
            n = int(text)
        except ValueError:
            raise ValueError(f"{config.NUM_THREADS}={text!r}: expected a positive integer") from None
        if n < 1:
            raise ValueError(f"{config.NUM_THREADS}={text!r}: expected a positive integer")
        return min(n, MAX_THREADS)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@engine.provider("threadpool")
def ensure_pool() -> None:
    """Compile the pool (once per process) and bind ``fg_par_run`` for compiled code."""
    with _lock:
        if _state:
            return
        addrs = engine.compile_ir(_POOL_IR, ["pool_init", "pool_set", "par_run"])
        _state["set"] = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(addrs["pool_set"])
        _state["init"] = ctypes.CFUNCTYPE(None)(addrs["pool_init"])
        _state["init"]()
        _state["threads"] = _default_threads()
        _state["set"](_state["threads"])
        engine.add_symbol("fg_par_run", addrs["par_run"])


def num_threads() -> int:
    """How many threads compiled loop nests may use now (``FUNCGRAD_NUM_THREADS``)."""
    ensure_pool()
    return _state["threads"]


def set_num_threads(n: int) -> int:
    """Let compiled loop nests use ``n`` threads from now on (1: only the calling
    thread). Returns the previous count. Results do not depend on it (``parallel.py``)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: n must be a positive int, got {n!r}")
    ensure_pool()
    with _lock:
        old = _state["threads"]
        _state["threads"] = min(n, MAX_THREADS)
        _state["set"](_state["threads"])
    return old


def _after_fork_in_child() -> None:
    # The child process has only the forking thread: forget the parent's workers (their
    # locks may have been held at the fork) and make new ones on the next job.
    _lock._at_fork_reinit()
    if _state:
        _state["init"]()
        _state["set"](_state["threads"])


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
