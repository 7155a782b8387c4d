"""funcgrad.random keys and bits: the Threefry known answers, JAX's key layout, split /
fold_in / bits, typed keys through transforms, determinism (eager == jit == vmap lanes)
and bad keys."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax, random
from funcgrad.random.threefry import threefry2x32

U32 = np.uint32


@pytest.mark.parametrize("key, count, want", [
    # Random123's known-answer vectors (kat_vectors, threefry2x32_20), also in JAX's tests
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
])
def test_threefry_known_answers_eager_and_jit(key, count, want):
    def f(k0, k1, x0, x1):
        return threefry2x32(k0, k1, x0, x1)

    args = (U32(key[0]), U32(key[1]), np.array([count[0]], U32), np.array([count[1]], U32))
    for fn in (f, fg.jit(f)):
        y0, y1 = fn(*args)
        assert (int(y0[0]), int(y1[0])) == want
        assert np.asarray(y0).dtype == np.uint32


def test_prngkey_is_jax_layout_and_split_matches_jax():
    np.testing.assert_array_equal(random.PRNGKey(42), np.array([0, 42], U32))
    np.testing.assert_array_equal(random.PRNGKey(-1), np.array([0xFFFFFFFF, 0xFFFFFFFF], U32))
    np.testing.assert_array_equal(random.PRNGKey(2**40 + 3), np.array([256, 3], U32))
    # jax.random.split(jax.random.PRNGKey(0)) with the (default) partitionable Threefry
    np.testing.assert_array_equal(random.split(random.PRNGKey(0)),
                                  np.array([[1797259609, 2579123966], [928981903, 3453687069]], U32))


def test_split_shapes_fold_in_and_bits():
    k = random.PRNGKey(3)
    assert random.split(k, 5).shape == (5, 2)
    assert random.split(k, (2, 3)).shape == (2, 3, 2)
    assert random.split(k, 0).shape == (0, 2)
    # split(k, n)[i] is the same whatever n: counter i
    np.testing.assert_array_equal(random.split(k, 7)[:3], random.split(k, 3))
    a, b = random.fold_in(k, 1), random.fold_in(k, 2)
    assert a.dtype == np.uint32 and a.shape == (2,) and not np.array_equal(a, b)
    assert random.bits(k, (3,)).dtype == np.uint64  # JAX's default under jax_enable_x64
    b32 = random.bits(k, (1000,), np.uint32)
    assert b32.dtype == np.uint32 and len(np.unique(np.asarray(b32))) == 1000
    b64 = random.bits(k, (4,), np.uint64)
    assert b64.dtype == np.uint64 and int(np.max(b64)) > 2**33
    assert random.bits(k).shape == ()


def test_typed_keys_index_iterate_and_round_trip():
    k = random.key(7)
    assert isinstance(k, random.KeyArray) and k.shape == () and k.ndim == 0
    np.testing.assert_array_equal(random.key_data(k), random.PRNGKey(7))
    ks = random.split(k, 4)
    assert isinstance(ks, random.KeyArray) and ks.shape == (4,) and len(ks) == 4
    parts = list(ks)
    assert len(parts) == 4 and parts[2].shape == ()
    np.testing.assert_array_equal(random.key_data(ks[1]), random.split(random.PRNGKey(7), 4)[1])
    assert ks[1:3].shape == (2,)
    assert ks.reshape(2, 2).shape == (2, 2)
    w = random.wrap_key_data(random.key_data(ks))
    np.testing.assert_array_equal(random.normal(w[3], (3,)), random.normal(ks[3], (3,)))
    # typed and raw keys with the same data give the same values
    np.testing.assert_array_equal(random.uniform(k, (4,)), random.uniform(random.PRNGKey(7), (4,)))


def test_typed_keys_through_jit_vmap_and_scan_carry():
    k = random.key(0)
    out = fg.jit(lambda k: random.split(k))(k)
    assert isinstance(out, random.KeyArray)
    np.testing.assert_array_equal(random.key_data(out), random.key_data(random.split(k)))
    lanes = fg.vmap(lambda k: random.uniform(k, (2,)))(random.split(k, 3))
    np.testing.assert_array_equal(lanes[1], random.uniform(random.split(k, 3)[1], (2,)))

    def step(key, _):
        key, sub = random.split(key)
        return key, random.normal(sub)

    def draws(key):
        return lax.scan(step, key, None, length=4)

    last, xs = fg.jit(draws)(k)
    last_e, xs_e = draws(k)
    assert isinstance(last, random.KeyArray) and xs.shape == (4,)
    np.testing.assert_allclose(xs, xs_e, rtol=1e-13)
    np.testing.assert_array_equal(random.key_data(last), random.key_data(last_e))


SAMPLERS = {
    "uniform": lambda k: random.uniform(k, (3,), minval=-1.0, maxval=2.0),
    "normal": lambda k: random.normal(k, (3,)),
    "normal_f32": lambda k: random.normal(k, (3,), np.float32),
    "randint": lambda k: random.randint(k, (4,), -5, 5),
    "bits": lambda k: random.bits(k, (3,)),
    "bernoulli": lambda k: random.bernoulli(k, 0.3, (4,)),
    "categorical": lambda k: random.categorical(k, fnp.array([0.1, 1.0, -1.0]), shape=(4,)),
    "choice": lambda k: random.choice(k, fnp.arange(6.0), (3,), replace=False),
    "permutation": lambda k: random.permutation(k, 5),
    "exponential": lambda k: random.exponential(k, (3,)),
    "gamma": lambda k: random.gamma(k, fnp.array([0.4, 3.0])),
    "poisson": lambda k: random.poisson(k, fnp.array([2.0, 40.0])),
    "binomial": lambda k: random.binomial(k, fnp.array([5.0, 300.0]), 0.4),
    "multinomial": lambda k: random.multinomial(k, 10.0, fnp.array([0.2, 0.3, 0.5])),
    "dirichlet": lambda k: random.dirichlet(k, fnp.array([0.5, 2.0])),
    "geometric": lambda k: random.geometric(k, 0.3, (3,)),
    "wald": lambda k: random.wald(k, 2.0, (3,)),
}
JIT_CHECKED = ("uniform", "normal", "normal_f32", "randint", "bits", "bernoulli", "categorical", "choice",
               "permutation", "gamma", "poisson")


@pytest.mark.parametrize("name", JIT_CHECKED)
def test_same_key_same_values_eagerly_and_under_jit(name):
    f = SAMPLERS[name]
    k = random.PRNGKey(11)
    e, j = f(k), fg.jit(f)(k)
    assert np.asarray(e).dtype == np.asarray(j).dtype and np.shape(e) == np.shape(j)
    if np.asarray(e).dtype.kind == "f":  # (compiled transcendentals: within an ulp or two)
        np.testing.assert_allclose(j, e, rtol=1e-6 if np.asarray(e).dtype == np.float32 else 1e-13)
    else:
        np.testing.assert_array_equal(j, e)


@pytest.mark.parametrize("name", ["uniform", "normal", "randint", "categorical", "gamma", "poisson", "binomial",
                                  "multinomial", "dirichlet", "geometric", "wald"])
def test_vmap_over_split_keys_matches_each_key(name):
    f = SAMPLERS[name]
    keys = random.split(random.PRNGKey(5), 3)
    batched = fg.vmap(f)(keys)
    for i in range(3):
        np.testing.assert_allclose(batched[i], f(keys[i]), rtol=1e-13)


@pytest.mark.parametrize("bad, match", [
    (np.zeros(2), "uniform: key must be a PRNG key.*f64\\[2\\]"),
    (np.zeros(3, np.uint32), "uniform: key must be a PRNG key.*u32\\[3\\]"),
    ("key", "uniform: key must be a PRNG key"),
    (np.zeros((3, 2), np.uint32), "uniform: key must be a single key, got a key array of shape \\(3,\\)"),
])
def test_bad_keys_raise_type_errors_naming_the_function(bad, match):
    with pytest.raises(TypeError, match=match):
        random.uniform(bad, (2,))


def test_bad_seeds_shapes_and_dtypes():
    with pytest.raises(TypeError, match="PRNGKey: seed must be an integer scalar, got f64"):
        random.PRNGKey(1.5)
    with pytest.raises(TypeError, match="key: seed must be an integer scalar"):
        random.key(np.arange(2))
    with pytest.raises(TypeError, match="split: num must be a non-negative int"):
        random.split(random.PRNGKey(0), -1)
    with pytest.raises(TypeError, match="bits: dtype must be an unsigned integer dtype"):
        random.bits(random.PRNGKey(0), (2,), np.int32)
    with pytest.raises(TypeError, match="normal: dtype must be a floating-point or complex dtype"):
        random.normal(random.PRNGKey(0), (2,), np.int64)
    with pytest.raises(TypeError, match="normal: shape must be a tuple of non-negative ints"):
        random.normal(random.PRNGKey(0), (2.5,))
    with pytest.raises(ValueError, match=r"uniform: shape \(2,\) must be a shape the parameter shapes \(\(3,\)"):
        random.uniform(random.PRNGKey(0), (2,), minval=np.zeros(3))
    with pytest.raises(TypeError, match="fold_in: data must be an integer scalar"):
        random.fold_in(random.PRNGKey(0), 1.5)
