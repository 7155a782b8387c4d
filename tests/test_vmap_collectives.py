"""vmap(axis_name=) with the collectives psum, pmean, pmax, pmin, all_gather and
axis_index over the named axis, as JAX's (issue #12)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

X = np.arange(6.0).reshape(3, 2) - 2.5
Y = np.arange(24.0).reshape(2, 3, 4) ** 1.5


@pytest.mark.parametrize("coll, ref", [
    (lax.psum, lambda x: x.sum(0)), (lax.pmean, lambda x: x.mean(0)),
    (lax.pmax, lambda x: x.max(0)), (lax.pmin, lambda x: x.min(0)),
])
def test_reductions_over_the_named_axis(coll, ref):
    out = fg.vmap(lambda v: coll(v, "i"), axis_name="i")(X)
    np.testing.assert_allclose(out, np.broadcast_to(ref(X), X.shape), rtol=1e-15)
    # An unbatched operand: every example holds the same value.
    const = fg.vmap(lambda v: coll(np.float64(2.0), "i") + 0 * v, axis_name="i")(X)
    np.testing.assert_allclose(const[:, 0], 6.0 if coll is lax.psum else 2.0)


def test_psum_keeps_the_dtype_and_takes_pytrees():
    out = fg.vmap(lambda v: lax.psum({"a": v, "b": v * 2}, "i"), axis_name="i")(np.arange(3, dtype=np.int32))
    assert out["a"].dtype == np.int32 and list(out["a"]) == [3, 3, 3] and list(out["b"]) == [6, 6, 6]


def test_all_gather_and_axis_index():
    g = fg.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(X)
    np.testing.assert_array_equal(g, np.broadcast_to(X, (3,) + X.shape))
    g1 = fg.vmap(lambda v: lax.all_gather(v, "i", axis=1), axis_name="i")(X)
    np.testing.assert_array_equal(g1[0], X.T)
    t = fg.vmap(lambda v: lax.all_gather(v, "i", tiled=True), axis_name="i")(X)
    np.testing.assert_array_equal(t[1], X.reshape(-1))
    idx = fg.vmap(lambda v: lax.axis_index("i"), axis_name="i")(X)
    assert idx.dtype == np.int32 and list(idx) == [0, 1, 2]


def test_nested_vmaps_with_different_names():
    over_i = fg.vmap(fg.vmap(lambda v: lax.psum(v, "i"), axis_name="j"), axis_name="i")(Y)
    np.testing.assert_allclose(over_i, np.broadcast_to(Y.sum(0), Y.shape), rtol=1e-14)
    over_j = fg.vmap(fg.vmap(lambda v: lax.psum(v, "j"), axis_name="j"), axis_name="i")(Y)
    np.testing.assert_allclose(over_j, np.broadcast_to(Y.sum(1, keepdims=True), Y.shape), rtol=1e-14)
    both = fg.vmap(fg.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(Y)
    np.testing.assert_allclose(both, np.broadcast_to(Y.sum((0, 1)), Y.shape), rtol=1e-14)
    gathered = fg.vmap(fg.vmap(lambda v: lax.all_gather(v, "i"), axis_name="j"), axis_name="i")(Y)
    assert gathered.shape == (2, 3, 2, 4)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(gathered[i, j], Y[:, j])
    # The inner vmap's batch axis is not at 0 in the operand (in_axes=1).
    inner_1 = fg.vmap(fg.vmap(lambda v: lax.pmax(v, "i"), in_axes=1, axis_name="j"), axis_name="i")(Y)
    np.testing.assert_allclose(inner_1, np.broadcast_to(Y.max(0).T, (2, 4, 3)))


def test_collectives_compose_with_grad_and_jit():
    x = np.array([1.0, 2.0, 3.0])

    def normalised(v):
        return v / lax.psum(v, "i")

    f = fg.vmap(normalised, axis_name="i")
    np.testing.assert_allclose(fg.jit(f)(x), x / 6.0, rtol=1e-15)
    np.testing.assert_allclose(fg.vmap(fg.jit(normalised), axis_name="i")(x), x / 6.0, rtol=1e-15)
    g = fg.grad(lambda x: fnp.sum(fg.vmap(lambda v: v * lax.psum(v, "i"), axis_name="i")(x)))(x)
    np.testing.assert_allclose(g, 2 * x.sum() * np.ones(3), rtol=1e-15)


def test_unbound_axis_names_raise_name_error():
    with pytest.raises(NameError, match="psum: unbound axis name: 'i'"):
        lax.psum(1.0, "i")
    with pytest.raises(NameError, match=r"axis_index: unbound axis name: 'k'.*bound axis names are \['i'\]"):
        fg.vmap(lambda v: lax.axis_index("k"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name"):
        fg.jit(lambda v: lax.pmean(v, "i"))(X)


def test_spmd_axis_name_is_accepted():
    out = fg.vmap(lambda v: lax.psum(v, "i"), axis_name="i", spmd_axis_name="data")(X)
    np.testing.assert_allclose(out[0], X.sum(0))


X3 = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize("outer", ["eager", "jit"])
def test_collectives_inside_grad_and_jvp_inside_the_named_vmap(outer):
    # JAX's semantics: psum is linear and its transpose is psum, so the gradient of
    # u * psum(u) at example i is psum(u) + psum(u) (every example's cotangent adds up).
    wrap = fg.jit if outer == "jit" else (lambda f: f)
    g = wrap(fg.vmap(lambda v: fg.grad(lambda u: u * lax.psum(u, "i"))(v), axis_name="i"))(X3)
    np.testing.assert_allclose(g, [12.0, 12.0, 12.0])
    t = wrap(fg.vmap(lambda v: fg.jvp(lambda u: u * lax.psum(u, "i"), (v,), (1.0,))[1], axis_name="i"))(X3)
    np.testing.assert_allclose(t, 6.0 + 3.0 * X3)  # psum(u) + u * psum(1)
    m = wrap(fg.vmap(lambda v: fg.grad(lambda u: u * lax.pmean(u, "i"))(v), axis_name="i"))(X3)
    np.testing.assert_allclose(m, [4.0, 4.0, 4.0])
    a = wrap(fg.vmap(lambda v: fg.grad(lambda u: fnp.sum(lax.all_gather(u, "i") ** 2))(v), axis_name="i"))(X3)
    np.testing.assert_allclose(a, 6.0 * X3)  # 3 examples, each d(x_j^2) = 2 x_j
    tiled = fg.vmap(lambda v: fg.grad(lambda u: fnp.sum(lax.all_gather(u, "i", tiled=True) ** 2))(v),
                    axis_name="i")(np.stack([X3, 2 * X3]))
    np.testing.assert_allclose(tiled, 4.0 * np.stack([X3, 2 * X3]))


def test_collectives_inside_jit_and_loops_inside_the_named_vmap():
    np.testing.assert_allclose(
        fg.vmap(lambda v: lax.fori_loop(0, 2, lambda i, c: c + lax.psum(c, "i"), v), axis_name="i")(X3),
        [31.0, 32.0, 33.0])
    np.testing.assert_allclose(
        fg.vmap(lambda v: lax.scan(lambda c, a: (c + lax.psum(a, "i"), None), 0.0, fnp.stack([v, v]))[0],
                axis_name="i")(X3), [12.0, 12.0, 12.0])
    np.testing.assert_allclose(
        fg.vmap(lambda v: lax.cond(v > 1.5, lambda a: lax.psum(a, "i"), lambda a: a, v), axis_name="i")(X3),
        [1.0, 6.0, 6.0])
    np.testing.assert_allclose(
        fg.vmap(lambda v: lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] + lax.pmax(c[1], "i")),
                                         (0, v))[1], axis_name="i")(X3), [10.0, 11.0, 12.0])
    np.testing.assert_allclose(
        fg.vmap(fg.jit(lambda v: fg.grad(lambda u: u * lax.psum(u, "i"))(v)), axis_name="i")(X3), [12.0] * 3)


def test_grad_over_an_inner_named_vmap_within_an_outer_one():
    out = fg.vmap(fg.vmap(lambda v: fg.grad(lambda u: u * lax.psum(u, "i"))(v), axis_name="j"),
                  axis_name="i")(np.ones((2, 3)))
    np.testing.assert_allclose(out, np.full((2, 3), 4.0))


def test_pmax_is_not_differentiable_as_in_jax():
    with pytest.raises(NotImplementedError, match="pmax"):
        fg.vmap(lambda v: fg.grad(lambda u: lax.pmax(u, "i"))(v), axis_name="i")(X3)
