"""The disk cache trusts only itself: a directory only this user can write, entries sealed
with an HMAC under the directory's secret key and naming the key that asked for them,
regular files opened without following links or blocking. Anything else (planted,
swapped, damaged, another user's) is refused and the program compiled, never run; a bad
directory or key file turns the cache off with one warning."""
import hashlib
import json
import os
import pwd
import resource
import shutil
import stat
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from funcgrad import config
from funcgrad.lowering import cache_files, disk_cache

from harness import CHILD_COUNTING_COMPILES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Jits ``x * scale + shift`` for each "scale,shift" argument; prints the results, how many
# modules it optimised (compiled) itself, the program-cache hits and the cache warnings.
CHILD = CHILD_COUNTING_COMPILES + """
import json, sys, warnings
from funcgrad.lowering import program_cache
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    outs = []
    for arg in sys.argv[1:]:
        scale, shift = map(float, arg.split(","))
        outs.append(np.asarray(fg.jit(lambda x: x * scale + shift)(np.arange(4.0))).tolist())
print(json.dumps({"out": outs, "optimised": len(optimised), "hits": program_cache.counts["hits"],
                  "warnings": [str(w.message) for w in caught if "compilation cache" in str(w.message)]}))
"""
A, B = "3,1", "5,-2"
A_OUT, B_OUT = [1.0, 4.0, 7.0, 10.0], [-2.0, 3.0, 8.0, 13.0]


def _limit_memory():  # (a child reading /dev/zero must not take the machine's memory)
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run(cache_dir, *programs, extra_env=None, timeout=300):
    env = dict(os.environ, FUNCGRAD_CACHE_DIR=str(cache_dir), PYTHONPATH=ROOT)
    env.pop(config.NO_DISK_CACHE, None)
    env.pop("FUNCGRAD_CACHE_SHARED", None)
    env.update(extra_env or {})
    res = subprocess.run([sys.executable, "-c", CHILD, *programs], capture_output=True, text=True, env=env,
                         timeout=timeout, preexec_fn=_limit_memory)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.splitlines()[-1])


def entries(cache_dir):
    return sorted(os.path.join(d, n) for d, _, names in os.walk(cache_dir) for n in names if n.endswith(".fgo"))


def program_entries(cache_dir):
    """{record path: object path} of the program records under ``cache_dir``."""
    found = {}
    for p in entries(cache_dir):
        with open(p, "rb") as f:
            payload = f.read()[disk_cache._HEADER:]
        if payload.startswith(b"{"):
            obj = json.loads(payload)["object"]
            found[p] = os.path.join(str(cache_dir), obj[:2], obj + ".fgo")
    return found


def payload_of(path):
    with open(path, "rb") as f:
        return f.read()[disk_cache._HEADER:]


def plant(path, payload):
    """``payload`` at ``path`` with the header anyone can compute: magic, the key the path
    names, the SHA-256 of the payload."""
    k = os.path.basename(path)[: -len(".fgo")]
    with open(path, "wb") as f:
        f.write(disk_cache._MAGIC + bytes.fromhex(k) + hashlib.sha256(payload).digest() + payload)


def nobody():
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("no user 'nobody' to own files")


def chown(path, uid, gid=-1):
    try:
        os.chown(path, uid, gid, follow_symlinks=False)
    except PermissionError:
        pytest.skip("this process cannot give files to another user (not root)")


@pytest.fixture
def warm(tmp_path):
    """A cache directory where A and B have been compiled and stored: (dir, {A: (record,
    object), B: (record, object)})."""
    d = tmp_path / "cache"
    first = run(d, A)
    (rec_a, obj_a), = program_entries(d).items()
    run(d, B)
    (rec_b, obj_b), = [item for item in program_entries(d).items() if item[0] != rec_a]
    assert first["out"] == [A_OUT]
    return d, {A: (rec_a, obj_a), B: (rec_b, obj_b)}


def test_made_directories_and_files_are_private(tmp_path):
    d = tmp_path / "made" / "by" / "funcgrad"
    run(d, A)
    for folder in (tmp_path / "made", tmp_path / "made" / "by", d):
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700, folder
    key = d / cache_files.KEY_FILE
    assert stat.S_IMODE(os.lstat(key).st_mode) == 0o600 and key.stat().st_size == 32
    found = entries(d)
    assert len(found) == 2  # A's record and object
    for p in found:
        assert stat.S_IMODE(os.lstat(p).st_mode) == 0o600
        assert stat.S_IMODE(os.lstat(os.path.dirname(p)).st_mode) == 0o700
    assert run(d, A)["optimised"] == 0  # and the cache is used


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770, 0o720])
def test_a_directory_others_can_write_is_not_used(tmp_path, mode):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, mode)
    out = run(d, A, B)
    assert out["out"] == [A_OUT, B_OUT]
    (warning,) = out["warnings"]  # one per process, naming the directory and why
    assert str(d) in warning and "writable" in warning
    assert list(d.iterdir()) == []  # nothing read, nothing written


def test_a_directory_of_another_user_is_not_used(tmp_path):
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    chown(d, nobody())
    out = run(d, A)
    assert out["out"] == [A_OUT]
    (warning,) = out["warnings"]
    assert str(d) in warning and f"uid {nobody()}" in warning
    assert list(d.iterdir()) == []


def test_entries_of_another_user_are_not_loaded(warm):
    d, progs = warm
    for p in entries(d):  # A's own entries, intact and sealed: only the owner is wrong
        chown(p, nobody())
    out = run(d, A)
    assert out["out"] == [A_OUT] and out["hits"] == 0 and out["optimised"] >= 1 and out["warnings"] == []
    assert os.lstat(progs[A][0]).st_uid == os.getuid()  # rewritten as ours
    assert run(d, A)["optimised"] == 0


@pytest.mark.parametrize("level", ["object", "record"])
def test_a_planted_entry_with_a_recomputed_header_does_not_run(warm, level):
    # B's code (or B's record) planted as A's with the header anyone can compute: without
    # the HMAC it is refused, so A's values come out (B's code would give B's).
    d, progs = warm
    which = 1 if level == "object" else 0
    plant(progs[A][which], payload_of(progs[B][which]))
    out = run(d, A)
    assert out["out"] == [A_OUT] and out["hits"] == 0  # (the record refused: A's IR emitted, its object linked)
    assert out["optimised"] == (1 if level == "object" else 0)
    assert run(d, A) == {"out": [A_OUT], "optimised": 0, "hits": 1, "warnings": []}  # rewritten


def test_an_entry_sealed_under_another_key_is_refused(warm, tmp_path):
    # B's entry copied whole (sealed for B's key) to A's name: the entry names B.
    d, progs = warm
    for which in (0, 1):
        with open(progs[B][which], "rb") as f:
            blob = f.read()
        with open(progs[A][which], "wb") as f:
            f.write(blob)
    out = run(d, A, B)
    assert out["out"] == [A_OUT, B_OUT] and out["optimised"] >= 1


def test_swapped_entries_are_refused(warm):
    d, progs = warm
    for which in (0, 1):
        a, b = progs[A][which], progs[B][which]
        os.rename(a, a + ".swap")
        os.rename(b, a)
        os.rename(a + ".swap", b)
    out = run(d, A, B)
    assert out["out"] == [A_OUT, B_OUT] and out["hits"] == 0
    assert run(d, A, B)["hits"] == 2  # both rewritten


def test_a_record_with_a_wrong_symbol_list_is_recompiled_not_raised(warm, monkeypatch):
    d, progs = warm
    record_path = progs[A][0]
    record = json.loads(payload_of(record_path))
    record["symbols"] = record["symbols"] + ["missing"]
    monkeypatch.setenv(config.CACHE_DIR, str(d))
    monkeypatch.delenv(config.NO_DISK_CACHE, raising=False)
    disk_cache.store(os.path.basename(record_path)[:-4], json.dumps(record).encode())  # sealed: ours
    out = run(d, A)
    assert out["out"] == [A_OUT] and out["hits"] == 0
    assert json.loads(payload_of(record_path))["symbols"] == record["symbols"][:-1]  # rewritten
    for _ in range(2):  # later processes: the repaired record
        assert run(d, A) == {"out": [A_OUT], "optimised": 0, "hits": 1, "warnings": []}


@pytest.mark.parametrize("sealed", [False, True])
def test_a_garbage_object_is_never_linked_into_a_crash(warm, monkeypatch, sealed):
    d, progs = warm
    obj_path = progs[A][1]
    garbage = b"\x7fELF\x02\x01\x01" + bytes(np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8))
    if sealed:  # (as if written by us: the linker rejects it, the entry goes, A compiles)
        monkeypatch.setenv(config.CACHE_DIR, str(d))
        monkeypatch.delenv(config.NO_DISK_CACHE, raising=False)
        disk_cache.store(os.path.basename(obj_path)[:-4], garbage)
    else:
        plant(obj_path, garbage)
    out = run(d, A)
    assert out["out"] == [A_OUT] and out["optimised"] >= 1
    assert payload_of(obj_path).startswith(b"\x7fELF") and payload_of(obj_path) != garbage
    assert run(d, A)["optimised"] == 0


@pytest.mark.parametrize("where", ["record", "object"])
@pytest.mark.parametrize("what", ["fifo", "symlink to /dev/zero"])
def test_a_fifo_or_a_link_at_an_entry_path_does_not_hang(warm, where, what):
    d, progs = warm
    path = progs[A][0 if where == "record" else 1]
    os.unlink(path)
    if what == "fifo":
        os.mkfifo(path, 0o600)
    else:
        os.symlink("/dev/zero", path)
    out = run(d, A, timeout=120)
    assert out["out"] == [A_OUT] and out["hits"] == 0 and out["optimised"] == (where == "object")
    assert stat.S_ISREG(os.lstat(path).st_mode)  # replaced by a real entry
    assert run(d, A)["optimised"] == 0


@pytest.mark.parametrize("damage", ["mode 644", "mode 640", "another user's", "symlink", "short"])
def test_a_key_file_anyone_else_could_read_or_write_turns_the_cache_off(tmp_path, damage):
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    key = d / cache_files.KEY_FILE
    if damage == "symlink":
        (tmp_path / "elsewhere").write_bytes(b"k" * 32)
        key.symlink_to(tmp_path / "elsewhere")
    else:
        key.write_bytes(b"k" * (31 if damage == "short" else 32))
        os.chmod(key, {"mode 644": 0o644, "mode 640": 0o640}.get(damage, 0o600))
        if damage == "another user's":
            chown(key, nobody())
    out = run(d, A, B)
    assert out["out"] == [A_OUT, B_OUT]
    (warning,) = out["warnings"]
    assert str(key) in warning
    assert entries(d) == []


def test_a_shared_cache_is_an_opt_in_for_the_directory_group(tmp_path):
    # A directory another member of our group made (owned by nobody, our gid, 0770): not
    # ours, so refused by default; used with FUNCGRAD_CACHE_SHARED=1, entries 0640.
    d = tmp_path / "team"
    d.mkdir()
    os.chmod(d, 0o2770)  # (set-group-ID: what is made inside belongs to the group)
    chown(d, nobody(), os.getgid())
    out = run(d, A)
    assert out["out"] == [A_OUT] and len(out["warnings"]) == 1 and entries(d) == []
    shared = {config.CACHE_SHARED: "1"}
    out = run(d, A, extra_env=shared)
    assert out["out"] == [A_OUT] and out["warnings"] == []
    assert stat.S_IMODE(os.lstat(d / cache_files.KEY_FILE).st_mode) == 0o640
    for p in entries(d):
        assert stat.S_IMODE(os.lstat(p).st_mode) == 0o640
        assert stat.S_IMODE(os.lstat(os.path.dirname(p)).st_mode) == 0o2770
        chown(p, nobody(), os.getgid())  # as if another member had written them
    assert run(d, A, extra_env=shared)["optimised"] == 0
    os.chmod(d, 0o777)  # writable by everyone: refused even when shared
    out = run(d, A, extra_env=shared)
    assert out["out"] == [A_OUT] and "writable by others" in out["warnings"][0]


def test_a_private_temporary_directory_is_used_without_a_warning(monkeypatch, recwarn):
    # (the test suite may run with its cache in such a directory)
    d = tempfile.mkdtemp(prefix="fg-cache-")
    try:
        monkeypatch.setenv(config.CACHE_DIR, d)
        monkeypatch.delenv(config.NO_DISK_CACHE, raising=False)
        assert disk_cache.enabled()
        disk_cache.store("ab" * 32, b"payload")
        assert disk_cache.load("ab" * 32) == b"payload"
        assert not [w for w in recwarn if "compilation cache" in str(w.message)]
    finally:
        shutil.rmtree(d)
