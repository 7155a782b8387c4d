"""The persistent compilation cache: object code on disk, so a new process starts warm.

What is stored: the relocatable object LLVM emits for one module's IR text (the engine
links it as a library, binding its external names then). The IR holds no addresses
(constants and Python type objects are named externals, bound at link time), so the same
program gives the same text, hence the same key, in every process.

The key is the SHA-256 of a format tag, the engine's fingerprint (target triple, host CPU
name and features, llvmlite version, optimisation pipeline), funcgrad's version and the
IR text. An entry is one file ``<dir>/<key[:2]>/<key>.fgo``:

    b"FGO2" | key (32 bytes) | HMAC-SHA256 of magic, key and payload (32 bytes) | payload

The HMAC is under the cache directory's secret key (``cache_files``: what the cache trusts,
the file checks, the key file): an entry is used only if it names the exact key that asked
for it and was written by someone holding the key, so a foreign, swapped, planted,
truncated or corrupted entry is refused before a byte of it reaches LLVM (and deleted if
it is ours; the program is compiled and the entry rewritten). Writes go to a private
temporary file in the same directory, renamed into place (atomic on POSIX), so concurrent
processes never see a partial entry. The directory is kept under a size bound by
deleting the least recently used entries (reads refresh an entry's time, to the hour);
stores check the bound by sampling one subdirectory, and walk the whole cache only when
the sample says it may be over.

Settings (``funcgrad/config.py``): ``FUNCGRAD_NO_DISK_CACHE=1`` turns it off,
``FUNCGRAD_CACHE_DIR`` moves it (default ``$XDG_CACHE_HOME/funcgrad`` or
``~/.cache/funcgrad``), ``FUNCGRAD_CACHE_MAX_MB`` bounds it (default 256),
``FUNCGRAD_CACHE_SHARED=1`` shares it with the directory's group. Any OS error (read-only
or full disk) turns into a cache miss (a directory that cannot be made or checked: into
the one warning), never into a failed compilation.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import stat

from funcgrad import config
from funcgrad.lowering import cache_files

_MAGIC = b"FGO2"
_HEADER = len(_MAGIC) + 32 + 32
_SUFFIX = ".fgo"
_VERSION = "funcgrad 0.1.0 / disk cache 2"
# Check the directory's size every this many stores, first by a sample (``_over_bound``).
_EVICT_EVERY = 16
_stores = [0]


def enabled() -> bool:
    """On, and its directory fit for use (else: one warning, and programs compile as if it
    were off)."""
    return not config.flag(config.NO_DISK_CACHE) and cache_files.root(directory()).secret is not None


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


def _path(root: str, k: str) -> str:
    return os.path.join(root, k[:2], k + _SUFFIX)


def load(k: str) -> bytes | None:
    """The object stored under ``k``, or None (missing, not trusted, or not sealed for
    ``k`` under this cache's key)."""
    root = cache_files.root(directory())
    if root.secret is None:
        return None
    path = _path(root.path, k)
    blob = cache_files.read(root, path)
    if blob is None:
        return None
    head = _MAGIC + bytes.fromhex(k)
    payload = memoryview(blob)[_HEADER:]
    if (len(blob) <= _HEADER or blob[:36] != head
            or not hmac.compare_digest(blob[36:_HEADER], cache_files.seal(root.secret, head, payload))):
        cache_files.discard(root, path)  # foreign, planted or damaged: recompiled and rewritten
        return None
    return blob[_HEADER:]


def discard(k: str) -> None:
    """Delete the entry under ``k`` (it passed the checks but does not work: e.g. a record
    whose object does not link)."""
    root = cache_files.root(directory())
    if root.secret is not None:
        cache_files.discard(root, _path(root.path, k))


def store(k: str, payload: bytes) -> None:
    """Write the entry atomically (a temporary file renamed into place)."""
    if len(payload) + _HEADER > cache_files.MAX_ENTRY:
        return  # (it would be refused when read)
    for _ in range(2):
        root = cache_files.root(directory())
        if root.secret is None:
            return
        path = _path(root.path, k)
        head = _MAGIC + bytes.fromhex(k)
        try:
            cache_files.write(root, path, (head, cache_files.seal(root.secret, head, payload), payload))
            break
        except FileNotFoundError:  # the directory was removed: made (with a new key) again
            cache_files.forget(root.path)
        except OSError:
            return
    else:
        return
    folder = os.path.dirname(path)
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
    """(last use, size, path) of every entry (none if the cache is not usable)."""
    found = []
    root = cache_files.root(directory())
    if root.secret is None:
        return found
    try:
        subdirs = os.listdir(root.path)
    except OSError:
        return found
    for sub in subdirs:
        folder = os.path.join(root.path, sub)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith(_SUFFIX) and not name.startswith(".tmp-"):
                p = os.path.join(folder, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
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


__all__ = ["enabled", "directory", "key", "load", "store", "discard", "evict", "clear", "entries", "max_bytes"]
