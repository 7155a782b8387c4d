"""The 50-op elementwise function of W10, shared by ``jit_suite.py`` and
``disk_cache_bench.py`` (importing jit_suite itself would run its setup)."""


def fifty_op(m, x, k):
    y = x
    for i in range(50):
        op = (i + k) % 5
        y = [m.sin(y), y * 1.0001 + 0.1, m.tanh(y), y - 0.5 * y * y, m.exp(-y * y)][op]
    return y
