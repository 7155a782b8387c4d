"""The disk cache's size bound checked by a sample (``disk_cache._over_bound``): a store in
a cache well under its bound does not walk the whole directory; one over it still evicts
down to the bound."""
import hashlib

import pytest

from funcgrad import config
from funcgrad.lowering import disk_cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(config.CACHE_DIR, str(tmp_path))
    monkeypatch.delenv(config.NO_DISK_CACHE, raising=False)
    monkeypatch.setattr(disk_cache, "_stores", [0])
    return tmp_path


def _key(i: int) -> str:
    return hashlib.sha256(f"entry {i}".encode()).hexdigest()


def _total() -> int:
    return sum(size for _, size, _ in disk_cache.entries())


def test_stores_under_the_bound_do_not_walk_the_cache(cache_dir, monkeypatch):
    for i in range(300):
        disk_cache.store(_key(i), b"x" * 1000)
    walks = []
    real = disk_cache.entries
    monkeypatch.setattr(disk_cache, "entries", lambda: walks.append(1) or real())
    monkeypatch.setattr(disk_cache, "_stores", [0])
    for i in range(300, 340):  # (checks at stores 1, 17, 33; 256 MB bound: never over)
        disk_cache.store(_key(i), b"y" * 1000)
    assert walks == []
    assert disk_cache.load(_key(339)) == b"y" * 1000 and len(real()) == 340


def test_stores_over_the_bound_evict_down_to_it(cache_dir, monkeypatch):
    monkeypatch.setenv(config.CACHE_MAX_MB, str(40_000 / 2**20))  # 40 kB
    for i in range(200):
        disk_cache.store(_key(i), b"z" * 1000)
    entries = disk_cache.entries()
    assert _total() <= 40_000 + 16 * 1100  # (at most one check interval over the bound)
    assert len(entries) < 200 and disk_cache.load(_key(199)) == b"z" * 1000  # the newest kept


def test_a_missing_directory_is_left_to_the_exact_walk(tmp_path):
    assert disk_cache._over_bound(str(tmp_path / "nope" / "ab"), 10) is True
