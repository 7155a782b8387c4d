"""funcgrad.example_libraries: optimizers against NumPy versions of their documented
update rules (the first two steps of each), stax layers' shapes and values, and a small
network trained with stax + adam under jit."""
import pickle

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad.example_libraries import optimizers, stax

RNG = np.random.default_rng(0)
X0 = {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=(2,))}
GRADS = [{"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=(2,))} for _ in range(2)]
LR = 0.1


# NumPy reference steps: (state, i, g) -> state, for one array; state[0] is x.
def _sgd():
    return (lambda x: (x,)), (lambda s, i, g: (s[0] - LR * g,))


def _momentum(mass=0.9, nesterov=False):
    def step(s, i, g):
        x, v = s
        v = mass * v + g
        return (x - LR * ((mass * v + g) if nesterov else v), v)
    return (lambda x: (x, np.zeros_like(x))), step


def _adagrad(mom=0.9):
    def step(s, i, g):
        x, gsq, m = s
        gsq = gsq + g * g
        m = (1 - mom) * g / np.sqrt(gsq) + mom * m
        return (x - LR * m, gsq, m)
    return (lambda x: (x, np.zeros_like(x), np.zeros_like(x))), step


def _rmsprop(gamma=0.9, eps=1e-8):
    def step(s, i, g):
        x, a = s
        a = gamma * a + (1 - gamma) * g * g
        return (x - LR * g / np.sqrt(a + eps), a)
    return (lambda x: (x, np.zeros_like(x))), step


def _rmsprop_momentum(gamma=0.9, eps=1e-8, mom=0.9):
    def step(s, i, g):
        x, a, m = s
        a = gamma * a + (1 - gamma) * g * g
        m = mom * m + LR * g / np.sqrt(a + eps)
        return (x - m, a, m)
    return (lambda x: (x, np.zeros_like(x), np.zeros_like(x))), step


def _adam(b1=0.9, b2=0.999, eps=1e-8):
    def step(s, i, g):
        x, m, v = s
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g * g + b2 * v
        mhat, vhat = m / (1 - b1 ** (i + 1)), v / (1 - b2 ** (i + 1))
        return (x - LR * mhat / (np.sqrt(vhat) + eps), m, v)
    return (lambda x: (x, np.zeros_like(x), np.zeros_like(x))), step


def _adamax(b1=0.9, b2=0.999, eps=1e-8):
    def step(s, i, g):
        x, m, u = s
        m = (1 - b1) * g + b1 * m
        u = np.maximum(b2 * u, np.abs(g))
        return (x - LR / (1 - b1 ** (i + 1)) * m / (u + eps), m, u)
    return (lambda x: (x, np.zeros_like(x), np.zeros_like(x))), step


def _sm3(mom=0.9):
    # Accumulators per axis: the entry's accumulator is the min over its row's and its
    # column's values, plus g**2; afterwards each axis keeps the max over the others.
    def init(x):
        return (x, np.zeros_like(x), [np.zeros(n) for n in np.atleast_1d(x).shape])

    def step(s, i, g):
        x, m, vs = s
        if x.ndim == 2:
            acc = np.minimum(vs[0][:, None], vs[1][None, :]) + g * g
            new_vs = [acc.max(axis=1), acc.max(axis=0)]
        else:
            acc = vs[0] + g * g
            new_vs = [acc]
        m = (1 - mom) * g / np.sqrt(acc) + mom * m
        return (x - LR * m, m, new_vs)
    return init, step


CASES = [
    ("sgd", (LR,), _sgd()), ("momentum", (LR, 0.9), _momentum()), ("nesterov", (LR, 0.9), _momentum(nesterov=True)),
    ("adagrad", (LR,), _adagrad()), ("rmsprop", (LR,), _rmsprop()), ("rmsprop_momentum", (LR,), _rmsprop_momentum()),
    ("adam", (LR,), _adam()), ("adamax", (LR,), _adamax()), ("sm3", (LR,), _sm3()),
]


@pytest.mark.parametrize("name,args,reference", CASES, ids=[c[0] for c in CASES])
def test_first_two_updates_match_the_documented_rule(name, args, reference):
    init_ref, step_ref = reference
    opt_init, opt_update, get_params = getattr(optimizers, name)(*args)
    state = opt_init(X0)
    update = fg.jit(opt_update)
    for i, g in enumerate(GRADS):
        state = (opt_update if i == 0 else update)(i, g, state)  # eager, then jitted (i traced)
    for key in X0:
        s = init_ref(X0[key])
        for i, g in enumerate(GRADS):
            s = step_ref(s, i, g[key])
        np.testing.assert_allclose(get_params(state)[key], s[0], rtol=1e-12, atol=1e-14, err_msg=f"{name} {key}")


def test_step_size_schedules():
    i = np.arange(12)
    np.testing.assert_allclose(optimizers.exponential_decay(1.0, 4, 0.5)(i), 0.5 ** (i / 4))
    np.testing.assert_allclose(optimizers.inverse_time_decay(1.0, 4, 0.5)(i), 1 / (1 + 0.5 * i / 4))
    np.testing.assert_allclose(optimizers.inverse_time_decay(1.0, 4, 0.5, staircase=True)(i), 1 / (1 + 0.5 * (i // 4)))
    np.testing.assert_allclose(optimizers.polynomial_decay(1.0, 10, 0.1, power=2.0)(i),
                               (1 - np.minimum(i, 10) / 10) ** 2 * 0.9 + 0.1)
    pc = optimizers.piecewise_constant([2, 5], [1.0, 0.5, 0.1])
    assert [float(pc(k)) for k in (0, 2, 3, 5, 6)] == [1.0, 1.0, 0.5, 0.5, 0.1]
    assert float(fg.jit(pc)(4)) == 0.5
    assert optimizers.make_schedule(0.3)(7) == 0.3 and optimizers.constant(2.0)(0) == 2.0
    sched = optimizers.exponential_decay(0.1, 1, 0.5)
    assert optimizers.make_schedule(sched) is sched
    with pytest.raises(TypeError, match="make_schedule"):
        optimizers.make_schedule(np.ones(2))
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [1.0, 2.0])


def test_schedule_drives_the_step_size():
    init, update, get = optimizers.sgd(optimizers.piecewise_constant([0], [1.0, 0.0]))  # step 0: 1.0, then 0.0
    s = update(0, np.ones(2), init(np.zeros(2)))
    s = update(1, np.ones(2), s)
    np.testing.assert_array_equal(get(s), [-1.0, -1.0])


def test_l2_norm_clip_grads_and_mismatched_trees():
    tree = {"a": np.array([3.0]), "b": np.array([[4.0]])}
    assert float(optimizers.l2_norm(tree)) == 5.0
    clipped = optimizers.clip_grads(tree, 1.0)
    np.testing.assert_allclose(float(optimizers.l2_norm(clipped)), 1.0)
    assert float(optimizers.clip_grads(tree, 10.0)["a"][0]) == 3.0
    init, update, _ = optimizers.sgd(0.1)
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update(0, [np.ones(1)], init(tree))


def test_optimizer_state_is_a_pytree_and_pickles_unpacked():
    init, update, get = optimizers.momentum(0.1, 0.9)
    state = update(0, GRADS[0], init(X0))
    leaves = fg.tree_util.tree_leaves(state)
    assert len(leaves) == 4 and all(np.shape(x) for x in leaves)
    back = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(optimizers.unpack_optimizer_state(state))))
    for key in X0:
        np.testing.assert_array_equal(get(back)[key], get(state)[key])
    np.testing.assert_array_equal(get(update(1, GRADS[1], back))["w"], get(update(1, GRADS[1], state))["w"])


# --- stax ----------------------------------------------------------------------------------
def test_layer_shapes_with_an_unknown_batch_size():
    init_fun, apply_fun = stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Conv(2, (3, 3), strides=(2, 2)), stax.BatchNorm(), stax.Flatten, stax.Dense(8), stax.Tanh,
        stax.FanOut(2), stax.parallel(stax.Dense(3), stax.serial(stax.Dense(3), stax.Sigmoid)), stax.FanInSum,
        stax.LogSoftmax)
    out_shape, params = init_fun(random.PRNGKey(0), (-1, 9, 9, 1))
    assert out_shape == (-1, 3)
    y = apply_fun(params, RNG.normal(size=(5, 9, 9, 1)))
    assert y.shape == (5, 3)
    np.testing.assert_allclose(np.exp(y).sum(axis=1), 1.0)
    for layer, in_shape in [(stax.ConvTranspose(2, (3, 3), strides=(2, 2)), (2, 5, 5, 3)),
                            (stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"), (2, 5, 5, 3)),
                            (stax.AvgPool((3, 3), strides=(2, 2), padding="SAME"), (2, 7, 7, 3)),
                            (stax.SumPool((2, 2)), (1, 4, 5, 2)),
                            (stax.FanInConcat(), [(2, 3), (2, 4)])]:
        shape, p = layer[0](random.PRNGKey(1), in_shape)
        x = [np.ones(s) for s in in_shape] if isinstance(in_shape, list) else np.ones(in_shape)
        assert layer[1](p, x).shape == shape


def test_layer_values():
    x = RNG.normal(size=(2, 4, 4, 3))
    _, (W, b) = stax.Dense(5)[0](random.PRNGKey(0), (2, 3))
    np.testing.assert_allclose(stax.Dense(5)[1]((W, b), x[0, 0, :2]), x[0, 0, :2] @ W + b)
    np.testing.assert_allclose(stax.MaxPool((2, 2), strides=(2, 2))[1]((), x),
                               x.reshape(2, 2, 2, 2, 2, 3).max(axis=(2, 4)))
    np.testing.assert_allclose(stax.AvgPool((2, 2), strides=(2, 2))[1]((), x),
                               x.reshape(2, 2, 2, 2, 2, 3).mean(axis=(2, 4)))
    # SAME average pooling divides by the in-bounds window size: constant stays constant.
    np.testing.assert_allclose(stax.AvgPool((3, 3), padding="SAME")[1]((), np.ones((1, 4, 4, 1))), 1.0)
    _, bn = stax.BatchNorm()[0](random.PRNGKey(0), x.shape)
    z = stax.BatchNorm()[1](bn, x)
    np.testing.assert_allclose(z, (x - x.mean((0, 1, 2))) / np.sqrt(x.var((0, 1, 2)) + 1e-5), atol=1e-12)
    assert stax.Flatten[1]((), x).shape == (2, 48)
    np.testing.assert_allclose(stax.Elu[1]((), np.array([-1.0, 1.0])), [np.exp(-1) - 1, 1.0])
    np.testing.assert_allclose(stax.elementwise(fg.nn.leaky_relu, negative_slope=0.5)[1]((), np.array([-2.0, 2.0])),
                               [-1.0, 2.0])
    layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1]))
    shape, p = layer[0](random.PRNGKey(0), (2, 6))
    assert shape == (2, 6) and layer[1](p, np.ones((2, 6))).shape == (2, 6)


def test_dropout_keeps_with_probability_rate_and_needs_a_key():
    init, apply = stax.Dropout(0.75)
    out = apply((), np.ones(20000), rng=random.PRNGKey(3))
    kept = out != 0
    assert abs(kept.mean() - 0.75) < 0.02 and np.allclose(out[kept], 1 / 0.75)
    np.testing.assert_array_equal(stax.Dropout(0.5, mode="test")[1]((), np.ones(3)), 1.0)
    with pytest.raises(ValueError, match="rng="):
        apply((), np.ones(3))


def test_mlp_trains_with_adam_under_jit():
    init_fun, predict = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(16), stax.Gelu, stax.Dense(1))
    _, params = init_fun(random.PRNGKey(0), (-1, 2))
    x = RNG.uniform(-1, 1, size=(64, 2))
    y = np.sin(2 * x[:, :1]) + x[:, 1:] ** 2

    def loss(params):
        return fnp.mean((predict(params, x) - y) ** 2)

    opt_init, opt_update, get_params = optimizers.adam(1e-2)

    @fg.jit
    def step(i, state):
        return opt_update(i, fg.grad(loss)(get_params(state)), state)

    state = opt_init(params)
    first = float(loss(params))
    for i in range(200):
        state = step(i, state)
    last = float(loss(get_params(state)))
    assert last < 0.1 * first
    assert step.cache_size() == 1  # the step number is traced: one compilation
