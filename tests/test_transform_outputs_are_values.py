"""The results of eager public transforms are values (issue #12): a function that hands
its input back unchanged must not hand the caller's own writeable buffer back, or a
later write to the buffer would change a result funcgrad returned."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

CASES = {
    "vmap": lambda b: fg.vmap(lambda x: x)(b),
    "jvp_primal": lambda b: fg.jvp(lambda x: x, (b,), (b,))[0],
    "jvp_tangent": lambda b: fg.jvp(lambda x: x, (b,), (b,))[1],
    "vjp_primal": lambda b: fg.vjp(lambda x: x, b)[0],
    "vjp_aux": lambda b: fg.vjp(lambda x: (x, b), b, has_aux=True)[2],
    "vjp_cotangent": lambda b: fg.vjp(lambda x: x, b)[1](b)[0],
    "linearize_primal": lambda b: fg.linearize(lambda x: x, b)[0],
    "linearize_tangent": lambda b: fg.linearize(lambda x: x, b)[1](b),
    "fori_loop_no_trips": lambda b: fg.lax.fori_loop(0, 0, lambda i, c: c, b),
    "vmap_closure": lambda b: fg.vmap(lambda x: b, axis_size=2, in_axes=None)(1.0),
    "checkpoint": lambda b: fg.checkpoint(lambda x: x)(b),
    "custom_jvp": lambda b: _identity_jvp(b),
    "custom_vjp": lambda b: _identity_vjp(b),
    "named_call": lambda b: fg.named_call(lambda x: x)(b),
    "custom_gradient": lambda b: fg.custom_gradient(lambda x: (x, lambda g: g))(b),
    # lax functions that are no-ops on these arguments (no equation is bound)
    "lax.stop_gradient": lambda b: fg.lax.stop_gradient(b),
    "lax.reshape": lambda b: fg.lax.reshape(b, (3,)),
    "lax.convert_element_type": lambda b: fg.lax.convert_element_type(b, np.float64),
    "lax.transpose": lambda b: fg.lax.transpose(b, (0,)),
    "lax.slice": lambda b: fg.lax.slice(b, (0,), (3,)),
    "lax.concatenate": lambda b: fg.lax.concatenate([b], 0),
    "lax.broadcast_in_dim": lambda b: fg.lax.broadcast_in_dim(b, (3,), (0,)),
    "lax.rev": lambda b: fg.lax.rev(b, ()),
}


@fg.custom_jvp
def _identity_jvp(x):
    return x


_identity_jvp.defjvp(lambda p, t: (p[0], t[0]))


@fg.custom_vjp
def _identity_vjp(x):
    return x


_identity_vjp.defvjp(lambda x: (x, None), lambda r, g: (g,))


@pytest.mark.parametrize("name", sorted(CASES))
def test_result_does_not_alias_the_callers_buffer(name):
    buf = np.arange(3.0)
    out = CASES[name](buf)
    snapshot = np.array(out)
    buf[:] = -1.0  # the caller reuses its buffer
    np.testing.assert_array_equal(out, snapshot)
    assert not np.shares_memory(out, buf)
    assert isinstance(out, fg.Array) and not out.flags.writeable


def test_computed_results_are_not_copied_again():
    x = fnp.sin(np.arange(3.0))  # already a value
    out = fg.vmap(lambda v: v)(x)
    assert out is x or np.shares_memory(out, x)  # a value needs no copy
