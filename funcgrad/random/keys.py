"""PRNG keys: ``PRNGKey``/``key``, ``split``, ``fold_in``, ``bits`` and key checking.

A raw key (``PRNGKey``) is a ``uint32[..., 2]`` array, as in JAX. A typed key (``key``)
is a ``KeyArray``: a small pytree node holding the same ``uint32[..., 2]`` data, whose
shape is ``data.shape[:-1]``; being a pytree, it goes through ``jit``, ``vmap``,
``grad`` and loop carries as its data leaf does. Every sampler accepts both kinds.
"""
from __future__ import annotations

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import dtypes
from funcgrad.core.avals import get_aval
from funcgrad.core.trace import Tracer
from funcgrad.random.threefry import hash_shape, threefry2x32
from funcgrad.tree_util import register_pytree_node

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)


class KeyArray:
    """Typed PRNG keys (``funcgrad.random.key(0)``): an array of keys of shape
    ``data.shape[:-1]`` over raw ``uint32[..., 2]`` data. Index, iterate and ``len`` it
    like an array of that shape; ``key_data(k)`` gives the raw data back."""

    __slots__ = ("_data",)

    def __init__(self, data):
        self._data = data

    @property
    def shape(self) -> tuple:
        return tuple(_aval(self._data).shape[:-1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> str:
        return KEY_DTYPE

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of an unsized key array (shape ())")
        return self.shape[0]

    def __getitem__(self, idx):
        if not self.shape:
            raise IndexError("a single key (shape ()) cannot be indexed")
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis for i in idx):
            raise IndexError("key arrays: Ellipsis indexing is not supported; index the axes explicitly")
        return KeyArray(self._data[idx + (slice(None),)])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return KeyArray(fnp.reshape(self._data, tuple(shape) + (2,)))

    def __repr__(self) -> str:
        return f"KeyArray(shape={self.shape}, data={self._data!r})"


register_pytree_node(KeyArray, lambda k: ((k._data,), None), lambda _, leaves: KeyArray(leaves[0]))


def _aval(x):
    return x.aval if isinstance(x, Tracer) else get_aval(np.asarray(x) if isinstance(x, (list, tuple)) else x)


def check_key(fname: str, key, argname: str = "key"):
    """``(raw uint32[..., 2] data, typed?)`` of a key, or a TypeError naming ``fname``."""
    if isinstance(key, KeyArray):
        return key._data, True
    try:
        aval = _aval(key)
    except Exception:
        aval = None
    if aval is None or aval.dtype != _U32 or not aval.shape or aval.shape[-1] != 2:
        got = f"{type(key).__name__}" if aval is None else aval.str_short()
        raise TypeError(
            f"{fname}: {argname} must be a PRNG key: funcgrad.random.key(seed) or PRNGKey(seed) "
            f"(uint32 data with a trailing dimension of 2), got {got}"
        )
    return (key if isinstance(key, Tracer) else fnp.asarray(key)), False


def single_key(fname: str, key, argname: str = "key"):
    """The raw ``uint32[2]`` data of one key (shape ()); batches of keys go through vmap."""
    data, typed = check_key(fname, key, argname)
    if _aval(data).shape != (2,):
        raise TypeError(
            f"{fname}: {argname} must be a single key, got a key array of shape {_aval(data).shape[:-1]}; "
            "map over many keys with funcgrad.vmap"
        )
    return data, typed


def _wrap(data, typed: bool):
    return KeyArray(data) if typed else data


def _seed_words(fname: str, seed):
    try:
        aval = None if isinstance(seed, KeyArray) else _aval(seed)
    except Exception:
        aval = None
    if aval is None or aval.dtype.kind not in "iu" or aval.shape != ():
        got = type(seed).__name__ if aval is None else aval.str_short()
        raise TypeError(f"{fname}: seed must be an integer scalar, got {got}")
    s = fnp.asarray(seed)
    s64 = lax.convert_element_type(s, _U64)  # two's complement of negative seeds, as JAX
    return fnp.stack([(s64 >> 32).astype(_U32), (s64 & 0xFFFFFFFF).astype(_U32)])


IMPL = "threefry2x32"
KEY_DTYPE = "key<fry>"  # what JAX prints for the dtype of threefry2x32 keys


def _impl(fname: str, impl, dtype=None):
    """Check an ``impl``/``dtype`` argument names the one implementation, threefry2x32."""
    if impl is not None and dtype is not None:
        raise ValueError(f"{fname}: give impl or dtype, not both")
    spec = impl if dtype is None else dtype
    if spec not in (None, IMPL, KEY_DTYPE):
        raise ValueError(f"{fname}: the only PRNG implementation is {IMPL!r} (key dtype {KEY_DTYPE!r}), "
                         f"got {spec!r}")


def PRNGKey(seed, *, impl=None):  # noqa: N802 - JAX's name
    """A raw key, ``uint32[2]`` = (high word, low word) of the 64-bit ``seed``, as JAX's.

    >>> funcgrad.random.PRNGKey(42)
    Array([ 0, 42], dtype=uint32)
    """
    _impl("PRNGKey", impl)
    return _seed_words("PRNGKey", seed)


def key(seed, *, impl=None, dtype=None):
    """A typed key (``KeyArray`` of shape ()) from an integer ``seed``; same bits as ``PRNGKey``."""
    _impl("key", impl, dtype)
    return KeyArray(_seed_words("key", seed))


def key_impl(keys):
    """The name of the PRNG implementation of ``keys`` (raw or typed): ``"threefry2x32"``,
    the only one."""
    check_key("key_impl", keys, "keys")
    return IMPL


def key_dtype(impl=None):
    """The dtype of typed keys of implementation ``impl`` (only threefry2x32):
    ``"key<fry>"``, equal to ``funcgrad.random.key(0).dtype``."""
    _impl("key_dtype", impl)
    return KEY_DTYPE


def clone(key):
    """``key`` itself: keys are immutable values here (JAX's ``clone`` matters only to its
    key-reuse checker)."""
    check_key("clone", key)
    return key


def key_data(keys):
    """The raw ``uint32[..., 2]`` data of typed keys (raw keys are returned as they are)."""
    return check_key("key_data", keys, "keys")[0]


def wrap_key_data(key_bits, *, impl=None, dtype=None):
    """Typed keys over raw ``uint32[..., 2]`` data (``impl``/``dtype``: only ``None``,
    ``"threefry2x32"`` or ``key_dtype()``)."""
    _impl("wrap_key_data", impl, dtype)
    return KeyArray(check_key("wrap_key_data", key_bits, "key_bits")[0])


def split(key, num=2):
    """``num`` new keys from one (``num`` may be a shape tuple): key ``i`` is the Threefry
    hash of counter ``i`` (both output words), as JAX's partitionable split."""
    data, typed = single_key("split", key)
    shape = tuple(num) if isinstance(num, (tuple, list)) else (num,)
    shape = tuple(_nonneg_int("split", "num", d) for d in shape)
    y0, y1 = hash_shape(data, shape)
    return _wrap(fnp.stack([y0, y1], axis=-1), typed)


def _nonneg_int(fname, name, d):
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 0:
        raise TypeError(f"{fname}: {name} must be a non-negative int (or a tuple of them), got {d!r}")
    return int(d)


def fold_in(key, data):
    """A new key from ``key`` and an integer ``data``: the hash of counter ``(0, data)``
    (the low 32 bits of ``data``, as JAX)."""
    raw, typed = single_key("fold_in", key)
    d = fnp.asarray(data)
    if _aval(d).shape != () or _aval(d).dtype.kind not in "iu":
        raise TypeError(f"fold_in: data must be an integer scalar, got {_aval(d).str_short()}")
    lo = lax.convert_element_type(d, _U32)[None]
    y0, y1 = threefry2x32(raw[0], raw[1], fnp.zeros((1,), _U32), lo)
    return _wrap(fnp.concatenate([y0, y1]), typed)


def shape_arg(fname: str, shape) -> tuple:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        return tuple(_nonneg_int(fname, "shape", d) for d in shape)
    except TypeError:
        raise TypeError(f"{fname}: shape must be a tuple of non-negative ints, got {shape!r}") from None


def random_bits(key_raw, bit_width: int, shape):
    """uint32 (xor of the two hash words) or uint64 (high word, low word) bits of ``shape``;
    uint8/uint16 bits are the low bits of the uint32 ones (as JAX's partitionable Threefry)."""
    y0, y1 = hash_shape(key_raw, shape)
    if bit_width == 32:
        return y0 ^ y1
    if bit_width < 32:
        return lax.convert_element_type(y0 ^ y1, np.dtype(f"u{bit_width // 8}"))
    return (lax.convert_element_type(y0, _U64) << 32) | lax.convert_element_type(y1, _U64)


def bits(key, shape=(), dtype=None):
    """Uniform random bits of ``shape``: ``dtype`` uint8, uint16, uint32 or uint64
    (default: uint64, as JAX with ``jax_enable_x64``).

    >>> funcgrad.random.bits(funcgrad.random.key(0), (3,), np.uint32)
    Array([4070199207, 4202968722, 1427181096], dtype=uint32)
    """
    raw, _ = single_key("bits", key)
    dt = _U64 if dtype is None else dtypes.canonicalize(dtype, what="bits dtype")
    if dt.kind != "u":
        raise TypeError(f"bits: dtype must be an unsigned integer dtype (uint8 ... uint64), got {dt.name}")
    return random_bits(raw, 8 * dt.itemsize, shape_arg("bits", shape))
