"""The persistent compilation cache: object code on disk, so a new process starts warm.

What is stored: the relocatable object LLVM emits for one module's IR text (the engine
links it as a library, binding its external names then). The IR holds no addresses
(constants and Python type objects are named externals, bound at link time), so the same
program gives the same text, hence the same key, in every process.

The key is the SHA-256 of a format tag, the engine's fingerprint (target triple, host CPU
name and features, llvmlite version, optimisation pipeline), funcgrad's version and the
IR text. An entry is one file ``<dir>/<key[:2]>/<key>.fgo``:

    b"FGO1" | key (32 bytes) | SHA-256 of the payload (32 bytes) | payload (object code)

Only bytes are read back (nothing is unpickled or executed before it passes both
checks); a truncated, corrupted or foreign file is ignored and rewritten. Writes go to
a temporary file in the same directory and are renamed into place (atomic on POSIX),
so concurrent processes never see a partial entry. The directory is kept under a size
bound by deleting the least recently used entries (reads refresh an entry's time); stores
check the bound by sampling one subdirectory, and walk the whole cache only when the
sample says it may be over.

Settings (``funcgrad/config.py``): ``FUNCGRAD_NO_DISK_CACHE=1`` turns it off,
``FUNCGRAD_CACHE_DIR`` moves it (default ``$XDG_CACHE_HOME/funcgrad`` or
``~/.cache/funcgrad``), ``FUNCGRAD_CACHE_MAX_MB`` bounds it (default 256). Any OS error
(read-only or full disk) turns into a cache miss, never into a failed compilation.
"""
from __future__ import annotations

import hashlib
import os
import tempfile

from funcgrad import config

_MAGIC = b"FGO1"
_HEADER = len(_MAGIC) + 32 + 32
_SUFFIX = ".fgo"
_VERSION = "funcgrad 0.1.0 / disk cache 1"
# Check the directory's size every this many stores, first by a sample (``_over_bound``).
_EVICT_EVERY = 16
_stores = [0]


def enabled() -> bool:
    return not config.flag(config.NO_DISK_CACHE)


def directory() -> str:
    return config.setting(config.CACHE_DIR) or config.default_cache_dir()


def max_bytes() -> int:
    mb = config.number_setting(config.CACHE_MAX_MB, 256, 0, "a size in MB, a number >= 0 (0 keeps no entries; "
                               f"{config.NO_DISK_CACHE}=1 turns the cache off)")
    return int(mb * 2**20)


def key(text: str, fingerprint: str) -> str:
    h = hashlib.sha256()
    for part in (_VERSION, fingerprint, text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _path(k: str) -> str:
    return os.path.join(directory(), k[:2], k + _SUFFIX)


def load(k: str) -> bytes | None:
    """The object stored under ``k``, or None (missing, unreadable, or not intact)."""
    path = _path(k)
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError:
        return None
    payload = blob[_HEADER:]
    if (len(blob) <= _HEADER or blob[:4] != _MAGIC or blob[4:36] != bytes.fromhex(k)
            or blob[36:68] != hashlib.sha256(payload).digest()):
        return None  # foreign, truncated or corrupted: recompiled and rewritten
    try:
        os.utime(path)  # most recently used
    except OSError:
        pass
    return payload


def store(k: str, payload: bytes) -> None:
    """Write the entry atomically (a temporary file renamed into place)."""
    path = _path(k)
    folder = os.path.dirname(path)
    tmp = None
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=_SUFFIX)
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + bytes.fromhex(k) + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        return
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _stores[0] += 1
    if _stores[0] % _EVICT_EVERY == 1 and _over_bound(folder, max_bytes()):
        evict(max_bytes())


def _over_bound(folder: str, limit: int) -> bool:
    """Whether the cache may be over ``limit``, judged from one of its subdirectories (the
    one just written): keys are SHA-256 digests, so each of the ``<key[:2]>`` folders holds
    about the same share. The full walk ``evict`` makes costs a ``stat`` per entry (16 ms
    of CPU for 5000 entries) and ran at every process's first store, inside its first
    cold ``jit`` call; the sample costs 1/256 of that. (An estimate over the bound is
    checked exactly by ``evict``; one under it is taken again 16 stores later.)"""
    try:
        folders = sum(1 for name in os.listdir(os.path.dirname(folder)) if len(name) == 2)
        with os.scandir(folder) as it:
            size = sum(e.stat().st_size for e in it if e.name.endswith(_SUFFIX))
    except OSError:
        return True  # (let the exact walk decide)
    return size * max(folders, 1) > limit * 0.9


def entries() -> list[tuple[float, int, str]]:
    """(last use, size, path) of every entry."""
    found = []
    root = directory()
    try:
        subdirs = os.listdir(root)
    except OSError:
        return found
    for sub in subdirs:
        folder = os.path.join(root, sub)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith(_SUFFIX) and not name.startswith(".tmp-"):
                p = os.path.join(folder, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                found.append((st.st_mtime, st.st_size, p))
    return found


def evict(limit: int) -> None:
    """Delete the least recently used entries until the cache is under ``limit`` bytes
    (down to 80% of it, so eviction does not run on every store)."""
    found = entries()
    total = sum(size for _, size, _ in found)
    if total <= limit:
        return
    for _, size, p in sorted(found):
        try:
            os.unlink(p)
        except OSError:
            continue
        total -= size
        if total <= 0.8 * limit:
            break


def clear() -> None:
    """Delete every entry."""
    for _, _, p in entries():
        try:
            os.unlink(p)
        except OSError:
            pass


__all__ = ["enabled", "directory", "key", "load", "store", "evict", "clear", "entries", "max_bytes"]
