"""A warm start (``engine.compile_library`` with the disk cache on): the vector-math
libraries a program record needs are linked together as one JIT library just before the
program (``engine._deferred``), with the same bits as a cold process; if they do not link
together each is linked alone, and an entry that is missing or corrupted is compiled again."""
import os
import subprocess
import sys
import textwrap

from harness import CHILD_COUNTING_COMPILES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = CHILD_COUNTING_COMPILES + textwrap.dedent("""
    import sys
    from funcgrad.lowering import program_cache
    if sys.argv[1] == "apart":  # the joint link fails: each library alone
        real = engine._link
        def link(obj, *a, **k):
            if isinstance(obj, list) and len(obj) > 1:
                raise RuntimeError("no joint link here")
            return real(obj, *a, **k)
        engine._link = link
    x = np.linspace(-2.0, 2.0, 41)
    f = fg.jit(lambda v: fnp.sin(v) * fnp.exp(-v * v) + fnp.tanh(v))
    out = f(x)
    assert not engine._deferred
    joint = [m for m in engine._permanent if {"fg_vm_sin_f64", "fg_vm_exp_f64"} <= set(m.addrs)]
    print(np.asarray(out).tobytes().hex(), len(optimised), program_cache.counts["library_hits"], len(joint))
""")


def _child(cache_dir, mode="joint"):
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=str(cache_dir), PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "tests")]))
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    res = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    value, optimised, hits, joint = res.stdout.split()
    return value, int(optimised), int(hits), int(joint)


def test_warm_libraries_link_together_with_the_same_bits(tmp_path):
    cold, cold_compiles, cold_hits, _ = _child(tmp_path)
    assert cold_compiles >= 4 and cold_hits == 0  # (the program and its three libraries)
    warm, warm_compiles, warm_hits, joint = _child(tmp_path)
    assert warm == cold and warm_compiles == 0
    assert warm_hits == 3 and joint == 1  # one JIT library holds sin, exp and tanh
    apart, apart_compiles, _, joint = _child(tmp_path, "apart")
    assert apart == cold and apart_compiles == 0 and joint == 0


def test_corrupted_objects_are_compiled_again(tmp_path):
    cold = _child(tmp_path)[0]
    corrupted = 0
    for path in _entries(tmp_path):  # every object entry (records are JSON, objects ELF)
        with open(path, "rb") as fh:
            blob = fh.read()
        if b"\x7fELF" in blob[:200]:
            with open(path, "wb") as fh:
                fh.write(blob[:-7] + b"garbage")
            corrupted += 1
    assert corrupted >= 4
    warm, compiles, _, _ = _child(tmp_path)
    assert warm == cold and compiles >= 4  # (every object rebuilt, and stored again)
    again, compiles, hits, joint = _child(tmp_path)
    assert again == cold and compiles == 0 and hits == 3 and joint == 1


def _entries(root):
    return [os.path.join(d, n) for d, _, names in os.walk(root) for n in names if n.endswith(".fgo")]
