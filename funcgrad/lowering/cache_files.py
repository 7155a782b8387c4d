"""The disk cache's files: a directory no one else can write, entries no one else can forge,
reads that never follow a link, never block and never read a file someone else controls.

The cache holds object code this process links and runs, so everything in it is code
someone could make us execute. What it trusts (the README's "Starting warm" says the same):

- the cache directory (``FUNCGRAD_CACHE_DIR``, and each parent directory funcgrad creates
  for it: mode 0700) belongs to this user and is writable by no one else;
- each entry is a regular file of this user's, writable by no one else, under ``MAX_ENTRY``
  bytes, opened with ``O_NOFOLLOW | O_NONBLOCK`` (a symlink, a FIFO or a device is refused
  before anything is read from it);
- each entry carries an HMAC-SHA256 (``seal``) under a secret key kept in the directory's
  ``KEY_FILE`` (32 random bytes, mode 0600, created once with ``O_EXCL``): only a process
  that can read the key can write an entry we accept. Keys are predictable (hashes of the
  program); the secret is not.

If the directory or its key file fails a check, the cache is not used at all (one warning
per process says which directory and why) and programs compile as usual. One user's
processes on several machines share a cache on a shared disk as they are (same uid, same
key file). ``FUNCGRAD_CACHE_SHARED=1`` opts in to a cache shared by the members of the
directory's group: the directory and entries may then be group-writable and belong to
another member, the key file group-readable (mode 0640); nothing may be writable by others.
Every member can then write code the others run.
"""
from __future__ import annotations

import errno
import hashlib
import hmac
import os
import stat
import tempfile
import threading
import time
import warnings

from funcgrad import config

KEY_FILE = "hmac.key"
_SECRET_BYTES = 32
_TOUCH_AFTER = 3600.0  # seconds: a load refreshes an entry's time only if older (a write of its inode)
MAX_ENTRY = 64 * 2**20  # (an object of 64 MB would be an enormous program; a bigger file is not ours)
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class Root:
    """One cache directory as this process found it at first use: ``secret`` is its HMAC
    key (None: the cache is not usable, ``reason`` says why), ``shared`` whether its group
    is trusted (``group``: the directory's gid)."""

    __slots__ = ("path", "shared", "uid", "group", "secret", "reason")

    def __init__(self, path: str, shared: bool):
        self.path, self.shared = path, shared
        self.uid = os.getuid() if hasattr(os, "getuid") else None
        self.group = None
        self.secret: bytes | None = None
        self.reason = ""

    @property
    def file_mode(self) -> int:
        return 0o640 if self.shared else 0o600

    @property
    def dir_mode(self) -> int:
        return 0o770 if self.shared else 0o700

    def trusted(self, st) -> bool:
        """May a file or directory with stat result ``st`` be used: ours and writable by no
        one else (shared: ours or the group's, writable by no one outside the group)."""
        if self.shared:
            return (st.st_uid == self.uid or st.st_gid == self.group) and not st.st_mode & stat.S_IWOTH
        return st.st_uid == self.uid and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)

    def distrust(self, what: str, st) -> str:
        """Why ``trusted(st)`` is False, for the warning."""
        owner = "this user" + (" or the directory's group" if self.shared else "")
        if st.st_uid != self.uid and not (self.shared and st.st_gid == self.group):
            return f"{what} belongs to uid {st.st_uid}, not to {owner} (uid {self.uid})"
        who = "others" if self.shared else "its group or others"
        return f"{what} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"


_roots: dict = {}
_lock = threading.Lock()
_warned = [False]  # one warning per process


def _after_fork() -> None:  # (a fork while another thread held the lock must not leave it held)
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def root(path: str) -> Root:
    """The cache directory ``path``, created (0700) and checked at its first use in this
    process, with its secret key read (or made) once."""
    shared = config.flag(config.CACHE_SHARED)
    r = _roots.get((path, shared))
    if r is None:
        with _lock:
            r = _roots.get((path, shared))
            if r is None:
                r = _prepare(path, shared)
                _roots[(path, shared)] = r
                if r.secret is None and not _warned[0]:
                    _warned[0] = True
                    warnings.warn(f"funcgrad: not using the disk compilation cache {path!r}: {r.reason}; "
                                  "programs are compiled without it", RuntimeWarning, stacklevel=2)
    return r


def forget(path: str) -> None:
    """Check ``path`` again at its next use (it was removed while this process used it)."""
    with _lock:
        for k in [k for k in _roots if k[0] == path]:
            del _roots[k]


def _prepare(path: str, shared: bool) -> Root:
    r = Root(path, shared)
    if r.uid is None:
        r.reason = "this system has no POSIX file ownership to check"
        return r
    try:
        r.reason = _check_directory(r, _makedirs(path, r.dir_mode)) or _read_secret(r)
    except OSError as err:
        r.reason = f"{err.strerror or err} ({err.filename or path})"
    return r


def _makedirs(path: str, mode: int) -> list[str]:
    """Create ``path`` and its missing parents with ``mode``; the ones created, outermost
    first (``os.makedirs`` would give the parents the umask's mode)."""
    missing = []
    p = os.path.abspath(path)
    while not os.path.lexists(p):
        missing.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for d in reversed(missing):
        try:
            _mkdir(d, mode)
        except FileExistsError:  # (made meanwhile by someone else: checked below like ours)
            continue
    return missing[::-1]


def _mkdir(d: str, mode: int) -> None:
    os.mkdir(d, mode)
    if mode & 0o070:  # (shared: the group bits the umask took; a set-group-ID bit inherited stays)
        os.chmod(d, stat.S_IMODE(os.stat(d).st_mode) | mode)


def _check_directory(r: Root, created: list[str]) -> str:
    others = stat.S_IWOTH | (0 if r.shared else stat.S_IWGRP)
    for d in created:  # (each must be the real directory we made, not a link)
        st = os.lstat(d)
        if not stat.S_ISDIR(st.st_mode):
            return f"{d} is not a directory"
        if st.st_uid != r.uid or st.st_mode & others:
            return r.distrust(d, st)
    st = os.stat(r.path)  # (the cache directory itself may be a link to one)
    if not stat.S_ISDIR(st.st_mode):
        return f"{r.path} is not a directory"
    if r.shared:
        if st.st_uid != r.uid and st.st_gid not in {os.getgid(), *os.getgroups()}:
            return f"{r.path} belongs to neither this user nor one of its groups (uid {st.st_uid}, gid {st.st_gid})"
        r.group = st.st_gid
    if not r.trusted(st):
        return r.distrust(r.path, st) + ("; `chmod go-w` it to use it" if st.st_uid == r.uid else "")
    return ""


def _read_secret(r: Root) -> str:
    """Read the directory's key file into ``r.secret`` (made first if missing); or why not."""
    path = os.path.join(r.path, KEY_FILE)
    for _ in range(2):
        try:
            fd = os.open(path, _READ)
        except FileNotFoundError:
            _make_secret(r, path)
            continue
        except OSError as err:  # (a symlink: ELOOP)
            return f"its key file {path} cannot be opened safely ({err.strerror})"
        try:
            st = os.fstat(fd)
            data = os.read(fd, _SECRET_BYTES + 1) if stat.S_ISREG(st.st_mode) else b""
        finally:
            os.close(fd)
        if not stat.S_ISREG(st.st_mode):
            return f"its key file {path} is not a regular file"
        # The key must be readable by no one who may not write entries: no one else, or
        # (shared) the group only, which may not change it.
        open_bits = stat.S_IMODE(st.st_mode) & (0o027 if r.shared else 0o077)
        if not r.trusted(st) or open_bits:
            return (r.distrust(f"its key file {path}", st) if not r.trusted(st) else
                    f"its key file {path} is open to {'others' if r.shared else 'its group or others'} "
                    f"(mode {stat.S_IMODE(st.st_mode):o}, should be {r.file_mode:o})")
        if len(data) != _SECRET_BYTES:
            return f"its key file {path} is not a funcgrad key ({len(data)} bytes)"
        r.secret = data
        return ""
    return f"its key file {path} could not be made"


def _make_secret(r: Root, path: str) -> None:
    """Write a new key to a private temporary file and link it into place: the key file
    appears complete or not at all, and only once (``link`` fails if it exists: then the
    process that made it first wins, and everyone reads its key)."""
    fd, tmp = tempfile.mkstemp(dir=r.path, prefix=".tmp-key-")  # (O_EXCL, mode 0600)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), r.file_mode)
            f.write(os.urandom(_SECRET_BYTES))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:  # (a file system without hard links: create it exclusively instead)
            try:
                out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), r.file_mode)
            except FileExistsError:
                return
            with os.fdopen(out, "wb") as f:
                with open(tmp, "rb") as src:
                    f.write(src.read())
    finally:
        os.unlink(tmp)


# --- entries ------------------------------------------------------------------------------------

def seal(secret: bytes, head: bytes, payload) -> bytes:
    """The HMAC-SHA256 of ``head`` (magic and key: the entry names what asked for it) and
    ``payload``."""
    h = hmac.new(secret, head, hashlib.sha256)
    h.update(payload)
    return h.digest()


def read(r: Root, path: str) -> bytes | None:
    """The bytes of the entry at ``path`` if it is a regular file we may trust (see the
    module's docstring), else None; an untrusted entry of ours is deleted."""
    try:
        fd = os.open(path, _READ)  # (a FIFO opens at once, a symlink not at all)
    except OSError as err:  # (a symlink: ELOOP, or EMLINK on the BSDs; anything else is a miss)
        if err.errno in (errno.ELOOP, errno.EMLINK):
            discard(r, path)
        return None
    try:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) and r.trusted(st) and st.st_size <= MAX_ENTRY):
            data = None
        else:
            data = os.read(fd, st.st_size + 1)
            if len(data) != st.st_size:
                return None  # (changed while we read it)
            if time.time() - st.st_mtime > _TOUCH_AFTER:
                try:
                    os.utime(fd)  # most recently used (for eviction: to the hour is enough)
                except OSError:
                    pass
    except OSError:
        return None
    finally:
        os.close(fd)
    if data is None:
        discard(r, path)
    return data


def discard(r: Root, path: str) -> None:
    """Delete the entry at ``path`` if it is ours (another user's is left alone: it is never
    read, and a store replaces it)."""
    try:
        if os.lstat(path).st_uid == r.uid:
            os.unlink(path)
    except OSError:
        pass


def write(r: Root, path: str, parts) -> None:
    """Write ``parts`` (bytes-likes) as the entry at ``path``: into a new private file in
    its folder (made with the cache's mode if missing, and used only if trusted), renamed
    into place (atomic on POSIX: readers see the old entry or the new one, whole).
    Raises OSError (``FileNotFoundError``: the cache directory is gone)."""
    folder = os.path.dirname(path)
    try:
        _mkdir(folder, r.dir_mode)
    except FileExistsError:
        pass
    st = os.lstat(folder)
    if not (stat.S_ISDIR(st.st_mode) and r.trusted(st)):
        raise PermissionError(f"{folder} is not a cache folder of ours")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.splitext(path)[1])  # (mode 0600)
    try:
        with os.fdopen(fd, "wb") as f:
            if r.shared:
                os.fchmod(f.fileno(), r.file_mode)
            for part in parts:
                f.write(part)
        os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


__all__ = ["Root", "root", "forget", "seal", "read", "discard", "write", "KEY_FILE", "MAX_ENTRY"]
