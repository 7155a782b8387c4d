"""The program-level disk cache keys a program by its array constants' bytes: any array a
user closes over must key (zero-size ones, transposed and broadcast views), and a program
linked from the cache must give the value it gave when compiled."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config
from funcgrad.lowering import program_cache


@pytest.fixture
def cache_on(fresh_disk_cache, monkeypatch):
    monkeypatch.delenv(config.NO_DISK_CACHE, raising=False)
    return fresh_disk_cache


W = np.zeros((2, 0))


@pytest.mark.parametrize("make_f, arg, want", [
    (lambda: lambda x: fnp.sum(fnp.tile(x, (2, 0)) * W), 1.5, 0.0),
    (lambda: lambda x: fnp.take(x, []), np.arange(3.0), np.zeros(0)),
    (lambda: lambda x: fnp.take(x, np.zeros((2, 0), np.int64)), np.arange(3.0), np.zeros((2, 0))),
    (lambda: lambda x: fnp.concatenate([np.zeros((0, 3)), x]), np.ones((2, 3)), np.ones((2, 3))),
])
def test_zero_size_constants_compile_and_link_from_the_cache(cache_on, make_f, arg, want):
    first = fg.jit(make_f())(arg)
    hits = program_cache.counts["hits"]
    again = fg.jit(make_f())(arg)  # a new jit object: the program is linked from the disk cache
    assert program_cache.counts["hits"] == hits + 1
    for got in (first, again):
        np.testing.assert_array_equal(got, want)
        assert np.shape(got) == np.shape(want)


def test_views_are_keyed_by_their_values():
    c = np.arange(9.0).reshape(3, 3)
    assert program_cache._digest(c.T) == program_cache._digest(np.ascontiguousarray(c.T))
    assert program_cache._digest(c.T) != program_cache._digest(c)
    b = np.broadcast_to(np.arange(3.0), (4, 3))  # zero strides
    assert program_cache._digest(b) == program_cache._digest(np.tile(np.arange(3.0), (4, 1)))
    assert program_cache._digest(np.zeros((2, 0))) != program_cache._digest(np.zeros((0, 2)))


def test_transposed_and_broadcast_constants_link_with_their_values(cache_on):
    c = np.arange(6.0).reshape(3, 2).T
    b = np.broadcast_to(np.arange(3.0), (4, 3))
    for _ in range(2):  # compiled, then linked from the disk cache
        np.testing.assert_array_equal(fg.jit(lambda x: x @ c)(np.ones(2)), np.ones(2) @ c)
        np.testing.assert_array_equal(fg.jit(lambda x: x * b)(2.0), 2.0 * b)
