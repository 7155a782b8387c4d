"""funcgrad.export: export / serialize / deserialize round trips, input checking, VJP
levels, pickling, and a loader that only ever raises ExportError on bad blobs."""
import collections
import json
import os
import pickle
import struct
import subprocess
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax, random
from funcgrad.errors import ExportError
from funcgrad.export import wire

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
F64 = np.float64


def _bitwise(got, want):
    got_l, want_l = fg.tree_util.tree_leaves(got), fg.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        assert g.tobytes() == w.tobytes(), (g, w)


def _round_trip(fun, *args, vjp_order=0, **kwargs):
    exp = fg.export(fg.jit(fun))(*args, **kwargs)
    loaded = fg.deserialize(exp.serialize(vjp_order=vjp_order))
    assert str(loaded.jaxpr) == str(exp.jaxpr)  # every param came back (the printout shows them all)
    return exp, loaded


@fg.custom_jvp
def _softplus(x):
    return fnp.log1p(fnp.exp(x))


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] * fg.nn.sigmoid(p[0])))


@fg.custom_vjp
def _scaled_grad(x):
    return fnp.sin(x)


_scaled_grad.defvjp(lambda x: (fnp.sin(x), x), lambda x, ct: (ct * 100.0,))

_x3 = np.array([0.3, -1.2, 0.8])
_m = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])

# One program per family of primitives (params of every kind: ints, tuples, nested
# tuples, dtypes, strs, None, floats, sub-jaxprs, tape avals).
FAMILIES = {
    "elementwise": (lambda x: fnp.tanh(x) * fnp.exp(-x) + x ** 3 - fnp.abs(x) / 2.0, (_x3,)),
    "casts_bits": (lambda x: (x.astype(np.float32) * 2, lax.bitcast_convert_type(x, np.uint64) >> 3,
                              (x > 0).astype(np.int32)), (_x3,)),
    "structural": (lambda x: fnp.concatenate([fnp.flip(x), fnp.pad(x, (1, 2))]).reshape(3, 3).T[::2], (_x3,)),
    "indexing": (lambda x, i: (x[i], x.at[i].add(1.0), fnp.take(x, i + 5), lax.dynamic_slice(x, (i[0],), (2,))),
                 (_x3, np.array([2, 0]))),
    "reductions": (lambda m: (fnp.sum(m, 0), fnp.max(m), fnp.argmin(m, 1), fnp.cumsum(m, 1), fnp.prod(m)), (_m,)),
    "dot": (lambda m, x: (m @ x, fnp.einsum("ij,jk->ik", m, m)), (_m, _x3)),
    "sort": (lambda x: (fnp.sort(x), fnp.argsort(x), lax.top_k(x, 2)), (_x3,)),
    "linalg": (lambda m: (fnp.linalg.cholesky(m), fnp.linalg.eigh(m)[0], fnp.linalg.solve(m, m[0]),
                          fnp.linalg.qr(m)[1], fnp.linalg.svd(m)[1], fnp.linalg.det(m)), (_m,)),
    "special": (lambda x: (fg.scipy.special.erf(x), fg.scipy.special.gammaln(x + 3), lax.erf_inv(x / 2),
                           fg.scipy.special.digamma(x + 2)), (_x3,)),
    "cond_switch": (lambda x, i: (lax.cond(x[0] > 0, lambda v: v * 2, lambda v: -v, x),
                                  lax.switch(i, [fnp.sin, fnp.cos, fnp.exp], x)), (_x3, 1)),
    "while_scan": (lambda x: (lax.while_loop(lambda c: c[1] < 5, lambda c: (c[0] * 1.1, c[1] + 1), (x, 0))[0],
                              lax.scan(lambda c, v: (c + v, c * v), 0.0, x)), (_x3,)),
    "custom_rules": (lambda x: fnp.sum(_softplus(x)) + fnp.sum(_scaled_grad(x)) + fg.checkpoint(fnp.sin)(x[0]),
                     (_x3,)),
    "random_bits": (lambda k: (random.normal(k, (3,)), random.bits(k, (2,)), random.split(k, 3)),
                    (random.PRNGKey(7),)),
    "nested_jit_pytrees": (lambda d, t: {"s": fg.jit(lambda a: a * 2)(d["a"]) + t[1], "n": None},
                           ({"a": _x3}, (1.0, 2.0))),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_round_trips_bitwise(family):
    fun, args = FAMILIES[family]
    exp, loaded = _round_trip(fun, *args)
    want = fg.jit(fun)(*args)
    _bitwise(loaded.call(*args), want)
    _bitwise(exp.call(*args), want)


def test_reverse_mode_through_a_while_loop_exports_its_tape():
    def f(x):
        c = lax.while_loop(lambda c: fnp.sum(c) < 50.0, lambda c: c * 1.5 + fnp.sin(c), x)
        return fnp.sum(c)

    g = fg.jit(fg.grad(f))
    x = np.array([0.3, 0.5])
    _, loaded = _round_trip(fg.grad(f), x)
    assert {"while_tape", "tape_apply"} <= {e.primitive.name for e in loaded.jaxpr.eqns}
    _bitwise(loaded.call(x), g(x))


def test_shape_dtype_structs_static_args_and_kwargs():
    def f(x, n, *, scale):
        return fnp.sum(x ** n) * scale

    exp = fg.export(fg.jit(f, static_argnums=1))(fg.ShapeDtypeStruct((3,), np.float32), 3, scale=2.0)
    loaded = fg.deserialize(exp.serialize())
    x = np.array([1.0, 2.0, 3.0], np.float32)
    _bitwise(loaded.call(x, scale=2.0), fg.jit(f, static_argnums=1)(x, 3, scale=2.0))
    assert loaded.in_avals[0].str_short() == "f32[3]" and loaded.out_avals[0].dtype == np.float32


def test_input_checking_names_the_argument():
    exp = fg.export(fg.jit(lambda x, d: x + d["y"]))(np.zeros(3), {"y": np.float64(1.0)})
    loaded = fg.deserialize(exp.serialize())
    with pytest.raises(TypeError, match=r"argument args\[0\] is f64\[4\].*exported for f64\[3\]"):
        loaded.call(np.zeros(4), {"y": np.float64(1.0)})
    with pytest.raises(TypeError, match=r"argument args\[1\]\['y'\] is f32\[\].*f64\[\]"):
        loaded.call(np.zeros(3), {"y": np.float32(1.0)})
    with pytest.raises(TypeError, match="structure"):
        loaded.call(np.zeros(3), {"z": np.float64(1.0)})
    with pytest.raises(TypeError, match="structure"):
        loaded.call(np.zeros(3))
    _bitwise(loaded.call(np.ones(3), {"y": 2.0}), np.full(3, 3.0))  # a Python scalar takes the dtype


def test_grad_through_the_serialized_vjp_any_order():
    x = np.array([0.3, -0.4])
    f = fg.jit(lambda x: fnp.sum(_scaled_grad(x) * fnp.exp(x)))
    exp = fg.export(f)(x)
    loaded = fg.deserialize(exp.serialize(vjp_order=2))
    # the custom_vjp's rule (x100) is kept by the VJP program, not the inlined forward
    np.testing.assert_allclose(fg.grad(loaded.call)(x), fg.grad(f)(x), rtol=1e-15)
    np.testing.assert_allclose(fg.jit(fg.grad(loaded.call))(x), fg.grad(f)(x), rtol=1e-15)
    np.testing.assert_allclose(fg.jacrev(fg.grad(loaded.call))(x), fg.jacrev(fg.grad(f))(x), rtol=1e-14)
    once = fg.deserialize(exp.serialize(vjp_order=1))
    fg.grad(once.call)(x)
    with pytest.raises(ExportError, match="vjp_order"):
        fg.jacrev(fg.grad(once.call))(x)
    none = fg.deserialize(exp.serialize())
    with pytest.raises(ExportError, match="no VJP"):
        fg.grad(none.call)(x)


def test_grad_matches_finite_differences_after_loading():
    fun = fg.jit(lambda x, y: fnp.sum(fnp.sin(x) * y ** 2))
    loaded = fg.deserialize(fg.export(fun)(_x3, 1.5).serialize(vjp_order=1))
    gx, gy = fg.grad(loaded.call, argnums=(0, 1))(_x3, 1.5)
    eps = 1e-6
    fd = [(loaded.call(_x3 + eps * e, 1.5) - loaded.call(_x3 - eps * e, 1.5)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(gx, fd, rtol=1e-8)
    np.testing.assert_allclose(gy, (loaded.call(_x3, 1.5 + eps) - loaded.call(_x3, 1.5 - eps)) / (2 * eps), rtol=1e-8)


def test_vmap_and_jit_of_a_loaded_function():
    loaded = fg.deserialize(fg.export(fg.jit(lambda x: fnp.sin(x) * fnp.sum(x)))(np.zeros(3)).serialize())
    xs = np.arange(12.0).reshape(4, 3) / 7
    _bitwise(fg.vmap(loaded.call)(xs), np.stack([loaded.call(x) for x in xs]))
    _bitwise(fg.jit(loaded.call)(xs[0]), loaded.call(xs[0]))


def test_pickle_round_trip_keeps_vjp_levels():
    exp = fg.export(fg.jit(lambda x: fnp.sum(x ** 3)))(_x3)
    again = pickle.loads(pickle.dumps(exp))
    _bitwise(again.call(_x3), exp.call(_x3))
    loaded = pickle.loads(pickle.dumps(fg.deserialize(exp.serialize(vjp_order=1))))
    np.testing.assert_allclose(fg.grad(loaded.call)(_x3), 3 * _x3 ** 2, rtol=1e-15)
    assert "vjp levels: 1" in repr(loaded)


def test_pytree_node_registration():
    Pair = collections.namedtuple("Pair", "a b")
    fun = fg.jit(lambda p: Pair(p.b, p.a * 2))
    exp = fg.export(fun)(Pair(np.float64(1.0), np.float64(2.0)))
    with pytest.raises(ExportError, match="register_pytree_node_serialization|register_namedtuple"):
        exp.serialize()
    fg.export.register_namedtuple_serialization(Pair, serialized_name="test_export.Pair")
    out = fg.deserialize(exp.serialize()).call(Pair(np.float64(1.0), np.float64(2.0)))
    assert type(out) is Pair and out == (2.0, 2.0)


def test_export_errors():
    with pytest.raises(TypeError, match="result of funcgrad.jit"):
        fg.export(lambda x: x)
    with pytest.raises(ValueError, match="CPU"):
        fg.export(fg.jit(fnp.sin), platforms=("tpu",))
    with pytest.raises(TypeError, match="export.*argument args\\[0\\]"):
        fg.export(fg.jit(fnp.sin))("not an array")
    with pytest.raises(TypeError, match="vjp_order"):
        fg.export(fg.jit(fnp.sin))(_x3).serialize(vjp_order=-1)
    with pytest.raises(NameError, match="unbound axis"):  # a collective outside its vmap
        fg.export(fg.jit(lambda x: lax.psum(x, "i")))(_x3)
    # ... and inside it, batched away: exportable
    per_lane = fg.export(fg.jit(fg.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i")))(_x3)
    _bitwise(fg.deserialize(per_lane.serialize()).call(_x3), _x3 / _x3.sum())


# --- the loader: foreign, damaged and tampered blobs -----------------------------------------

@pytest.fixture(scope="module")
def blob():
    fun, args = FAMILIES["cond_switch"]
    return fg.export(fg.jit(fun))(*args).serialize(vjp_order=1)


def _reseal(header: dict, data: bytes, version=wire.FORMAT_VERSION) -> bytes:
    sealed = bytearray(wire.seal(header, data))
    struct.pack_into("<I", sealed, 16, version)
    return bytes(sealed)


def _parts(blob):
    header, data = wire.unseal(blob)
    return header, bytes(data)


def test_foreign_truncated_and_other_version_blobs(blob):
    with pytest.raises(ExportError, match="not a funcgrad export"):
        fg.deserialize(b"\x80\x04K\x01.")  # a pickle
    with pytest.raises(ExportError, match="truncated"):
        fg.deserialize(blob[:-5])
    with pytest.raises(ExportError, match="checksum"):
        fg.deserialize(blob[:-1] + bytes([blob[-1] ^ 1]))
    header, data = _parts(blob)
    with pytest.raises(ExportError, match="format version 99 is not supported"):
        fg.deserialize(_reseal(header, data, version=99))
    with pytest.raises(TypeError, match="expected bytes"):
        fg.deserialize("a string")


def _mutate(node, rng):
    """A copy of the JSON ``node`` with one of its values (any node, chosen uniformly)
    replaced by junk of another shape or type."""
    junk = [None, -1, 0, 7, 10**30, "add", "", [], {}, [1, 2], {"j": 99}, {"f": "zz"}, True, 2.5, ["f64", [3], 0],
            ["float64", [10**12], 0], {"t": [1, {"L": []}]}, ["py", "float64", [], [10**9, 8]]]
    new = json.loads(json.dumps(node))
    paths, todo = [], [(new, ())]
    while todo:
        cur, path = todo.pop()
        for k in (range(len(cur)) if isinstance(cur, list) else cur if isinstance(cur, dict) else ()):
            paths.append((cur, k))
            todo.append((cur[k], path + (k,)))
    parent, key = paths[rng.integers(len(paths))]
    parent[key] = junk[rng.integers(len(junk))]
    return new


def test_fuzzed_blobs_only_raise_export_error(blob):
    rng = np.random.default_rng(14)
    header, data = _parts(blob)
    loaded = collections.Counter()
    for i in range(300):
        kind = i % 3
        if kind == 0:  # byte flips anywhere (the checksum or a prefix check catches them)
            b = bytearray(blob)
            for p in rng.integers(0, len(b), rng.integers(1, 4)):
                b[p] ^= int(rng.integers(1, 256))
            b = bytes(b)
        elif kind == 1:  # truncation
            b = blob[: rng.integers(0, len(blob))]
        else:  # a tampered program with a valid checksum: the grammar and type checks must hold
            b = _reseal(dict(header, exports=_mutate(header["exports"], rng)), data)
        try:
            fg.deserialize(b)
            loaded[kind] += 1
        except ExportError:
            pass
    assert loaded[0] == loaded[1] == 0
    assert loaded[2] < 50  # (a mutation may be harmless: a function name, an unused value)


def test_round_trip_in_a_new_process_without_the_source(tmp_path, blob):
    fun, args = FAMILIES["cond_switch"]
    want = fg.jit(fun)(*args)
    (tmp_path / "f.bin").write_bytes(blob)
    script = (
        "import pickle, sys, numpy as np, funcgrad as fg\n"
        "g = fg.deserialize(open(sys.argv[1], 'rb').read())\n"
        "x = np.array([0.3, -1.2, 0.8])\n"
        "a, b = g.call(x, 1)\n"
        "gr = fg.grad(lambda x: g.call(x, 1)[1].sum())(x)\n"
        "j = pickle.load(open(sys.argv[3], 'rb'))\n"
        "np.savez(sys.argv[2], a=a, b=b, gr=gr, j=j(x, 2, scale=0.5), jg=fg.grad(j)(x, 2, scale=0.5))\n"
        "assert 'test_export' not in sys.modules\n"
    )
    jitted = fg.jit(_power_sum, static_argnums=1)
    jitted(args[0], 2, scale=0.5)
    (tmp_path / "j.pkl").write_bytes(pickle.dumps(jitted))
    out = tmp_path / "out.npz"
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "f.bin"), str(out), str(tmp_path / "j.pkl")],
                   check=True, cwd=tmp_path, env=env, timeout=120)
    got = np.load(out)
    _bitwise([got["a"], got["b"]], list(want))
    np.testing.assert_allclose(got["gr"], fg.grad(lambda x: fun(x, 1)[1].sum())(args[0]), rtol=1e-15)
    _bitwise(got["j"], jitted(args[0], 2, scale=0.5))
    np.testing.assert_allclose(got["jg"], args[0], rtol=1e-15)


def _power_sum(x, n, scale=1.0):
    return fnp.sum(x ** n) * scale


def test_jitted_functions_pickle_by_their_compiled_signatures():
    jitted = fg.jit(_power_sum, static_argnums=1)
    x32 = _x3.astype(np.float32)
    want = [jitted(_x3, 2), jitted(_x3, 3, scale=2.0), jitted(x32, 2)]
    loaded = pickle.loads(pickle.dumps(jitted))
    assert "3 signature(s)" in repr(loaded)
    for got, w in zip([loaded(_x3, 2), loaded(_x3, 3, scale=2.0), loaded(x32, 2)], want):
        _bitwise(got, w)
    np.testing.assert_allclose(fg.grad(loaded)(_x3, 3, scale=2.0), 6 * _x3 ** 2, rtol=1e-15)
    again = pickle.loads(pickle.dumps(loaded))
    _bitwise(again(_x3, 3, scale=2.0), want[1])
    with pytest.raises(TypeError, match=r"only the signatures.*\(f64\[3\]\)"):
        loaded(_x3, 4)
    with pytest.raises(TypeError, match="only the signatures"):
        loaded(np.zeros(5), 2)
