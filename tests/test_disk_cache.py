"""The on-disk compilation cache (issue #14): a new process starts warm; entries are
intact or ignored; concurrent processes are safe; the directory stays bounded."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config
from funcgrad.lowering import disk_cache, engine

from harness import CHILD_COUNTING_COMPILES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A program with an array constant (bound at link time) and a Python scalar; the child
# prints its result's bytes and whether it compiled (optimised) anything itself.
CHILD = CHILD_COUNTING_COMPILES + textwrap.dedent("""
    import sys
    w = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    f = fg.jit(lambda x, s: fnp.sum(fnp.tanh(x @ w) * s) + fnp.sin(x).sum())
    out = f(np.arange(3.0) / 3, 0.5)
    print(np.asarray(out).tobytes().hex(), len(optimised))
""")


def _run_child(cache_dir, extra_env=None):
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=str(cache_dir), PYTHONPATH=ROOT)
    env.pop("FUNCGRAD_NO_DISK_CACHE", None)
    env.update(extra_env or {})
    res = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    value, optimised = res.stdout.split()
    return value, int(optimised)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(config.CACHE_DIR, str(tmp_path))
    monkeypatch.delenv(config.NO_DISK_CACHE, raising=False)
    return tmp_path


def test_a_new_process_starts_warm_with_the_same_bits(cache_dir):
    cold_value, cold_optimised = _run_child(cache_dir)
    assert cold_optimised >= 1 and disk_cache.entries()
    warm_value, warm_optimised = _run_child(cache_dir)
    assert warm_value == cold_value  # bitwise
    assert warm_optimised == 0  # every module (the program and the math libraries) came from disk


def test_switched_off_nothing_is_written(tmp_path):
    _run_child(tmp_path, {"FUNCGRAD_NO_DISK_CACHE": "1"})
    assert not any(tmp_path.iterdir())


def _compile_fresh(scale):
    """Compile a program (a new jit object each time) and return (its output, its key)."""
    engine._module_cache.clear()  # as in a new process: nothing compiled in memory
    f = fg.jit(lambda x: fnp.cos(x) * scale + 0.25)
    out = f(np.arange(5.0))
    (exe,) = [entry[0].memo["exe"] for entry in f._cache.values()]
    return out, disk_cache.key(exe.llvm_ir_unoptimized, engine._state["fingerprint"])


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign", "empty"])
def test_corrupted_truncated_and_foreign_entries_are_ignored_and_rewritten(cache_dir, damage):
    expected = np.cos(np.arange(5.0)) * 1.75 + 0.25
    out, key = _compile_fresh(1.75)
    np.testing.assert_allclose(out, expected)
    path = os.path.join(str(cache_dir), key[:2], key + ".fgo")
    blob = open(path, "rb").read()
    if damage == "flip":
        blob = blob[:-1] + bytes([blob[-1] ^ 0xFF])
    elif damage == "truncate":
        blob = blob[: len(blob) // 2]
    elif damage == "foreign":  # another program's intact entry under this name
        _, other = _compile_fresh(2.75)
        blob = open(os.path.join(str(cache_dir), other[:2], other + ".fgo"), "rb").read()
    else:
        blob = b""
    with open(path, "wb") as f:
        f.write(blob)
    assert disk_cache.load(key) is None
    out, _ = _compile_fresh(1.75)
    np.testing.assert_allclose(out, expected)
    assert disk_cache.load(key) is not None  # rebuilt


def test_concurrent_processes_share_the_cache_safely(cache_dir):
    procs = [subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**{k: v for k, v in os.environ.items() if k != "FUNCGRAD_NO_DISK_CACHE"},
                                   "FUNCGRAD_CACHE_DIR": str(cache_dir), "PYTHONPATH": ROOT})
             for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    values = {o.split()[0] for o, _ in outs}
    assert len(values) == 1
    assert not [n for _, _, p in disk_cache.entries() for n in [p] if ".tmp-" in n]
    for _, _, p in disk_cache.entries():  # every entry intact
        key = os.path.basename(p)[: -len(".fgo")]
        assert disk_cache.load(key) is not None
    assert _run_child(cache_dir)[1] == 0


def test_eviction_keeps_the_directory_bounded(cache_dir):
    for scale in (2.5, 3.5, 4.5):
        _compile_fresh(scale)
    found = disk_cache.entries()
    total = sum(size for _, size, _ in found)
    oldest = min(found)[2]
    disk_cache.evict(total - 1)
    left = disk_cache.entries()
    assert sum(size for _, size, _ in left) <= 0.8 * (total - 1)
    assert oldest not in [p for _, _, p in left]  # least recently used first


def test_identical_programs_with_different_constants_do_not_share_code(cache_dir):
    a = np.arange(6.0)
    f1 = fg.jit(lambda x: x * a[::-1] + 1.0)
    f2 = fg.jit(lambda x: x * a + 1.0)
    x = np.ones(6)
    np.testing.assert_array_equal(f1(x), a[::-1] + 1.0)
    np.testing.assert_array_equal(f2(x), a + 1.0)


def test_settings_are_described():
    text = config.describe()
    assert config.CACHE_DIR in text and config.CACHE_MAX_MB in text and config.NO_DISK_CACHE in text
    with pytest.raises(KeyError, match="FUNCGRAD_NO_SUCH"):
        config.setting("FUNCGRAD_NO_SUCH")
