"""``funcgrad.example_libraries.optimizers``: first-order optimizers as pure functions,
as ``jax.example_libraries.optimizers``.

An optimizer is a triple ``(init_fun, update_fun, get_params)``:

>>> opt_init, opt_update, get_params = adam(1e-3)
>>> state = opt_init(params)                     # params: any pytree of arrays
>>> state = opt_update(step, grads, state)       # grads: the same pytree structure
>>> params = get_params(state)

The state is an ``OptimizerState`` pytree, so ``update_fun`` can be jitted (with the step
number traced). A step size is a number or a *schedule*, a function of the step number
(``exponential_decay``, ``piecewise_constant``, ...). Each optimizer is written for one
array and lifted to pytrees by the ``optimizer`` decorator.
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

__all__ = [
    "OptimizerState", "Optimizer", "JoinPoint", "optimizer", "sgd", "momentum", "nesterov", "adagrad", "rmsprop",
    "rmsprop_momentum", "adam", "adamax", "sm3", "constant", "exponential_decay", "inverse_time_decay",
    "polynomial_decay", "piecewise_constant", "make_schedule", "l2_norm", "clip_grads",
    "unpack_optimizer_state", "pack_optimizer_state",
]

Schedule = Callable[[Any], Any]

# The state of a pytree optimizer: the per-leaf states' leaves, the parameters' tree
# structure and each per-leaf state's own structure (static: not traced by jit).
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]),
)

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


def optimizer(opt_maker):
    """Decorator: lift an optimizer written for one array to pytrees of arrays.

    ``opt_maker(*args)`` returns ``(init, update, get_params)`` acting on one array
    (``init(x0) -> state``, ``update(i, g, state) -> state``, ``get_params(state) -> x``,
    where a state is any pytree); the decorated function returns the same triple acting on
    pytrees, with an ``OptimizerState`` as the state.
    """

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            flat_states, subtrees = _unzip(tree_flatten(init(x0)) for x0 in x0_flat)
            return OptimizerState(flat_states, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            flat_states, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match the parameter "
                    f"tree structure with which it was initialized: parameter tree {tree} and grad tree "
                    f"{grad_tree_def}")
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, flat_states)]
            new_states = [update(i, g, state) for g, state in zip(grad_flat, states)]
            new_flat, new_subtrees = _unzip(tree_flatten(s) for s in new_states)
            for old, new in zip(subtrees, new_subtrees):
                if old != new:
                    raise TypeError(f"optimizer update function produced an output structure that did not "
                                    f"match its input structure: input {old} and output {new}")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            flat_states, tree, subtrees = opt_state
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, flat_states)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _unzip(pairs):
    pairs = list(pairs)
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


# --- the optimizers (one array each) --------------------------------------------------------
@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x -= step_size(i) * g``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    return init, update, _identity


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum: ``v = mass * v + g``, ``x -= step_size(i) * v``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, _first


@optimizer
def nesterov(step_size, mass):
    """Nesterov momentum: ``v = mass * v + g``, ``x -= step_size(i) * (mass * v + g)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum: the gradient scaled by the inverse root of the running sum
    of its squares (0 where that sum is 0), then averaged with ``momentum``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + fnp.square(g)
        inv_sqrt = fnp.where(g_sq > 0, 1.0 / fnp.sqrt(fnp.where(g_sq > 0, g_sq, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: ``a = gamma * a + (1 - gamma) * g**2``, ``x -= step_size(i) * g / sqrt(a + eps)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / fnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum: ``a`` as in ``rmsprop``; ``m = momentum * m + step_size(i) *
    g / sqrt(a + eps)``, ``x -= m``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + fnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / fnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba): bias-corrected first and second moment estimates;
    ``x -= step_size(i) * m_hat / (sqrt(v_hat) + eps)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * fnp.square(g) + b2 * v
        m_hat = m / (1 - fnp.asarray(b1, fnp.result_type(m)) ** (i + 1))
        v_hat = v / (1 - fnp.asarray(b2, fnp.result_type(m)) ** (i + 1))
        return x - step_size(i) * m_hat / (fnp.sqrt(v_hat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (Adam with the infinity norm): ``u = max(b2 * u, |g|)``,
    ``x -= step_size(i) / (1 - b1**(i+1)) * m / (u + eps)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, fnp.zeros_like(x0), fnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        x = x - (step_size(i) / (1 - fnp.asarray(b1, fnp.result_type(m)) ** (i + 1))) * m / (u + eps)
        return x, m, u

    return init, update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., memory-efficient adaptive optimization): one accumulator vector
    per axis instead of one per entry; the entry's accumulator is the minimum over its
    axes' entries, plus ``g**2``."""
    step_size = make_schedule(step_size)

    def init(x0):
        # The per-axis accumulators are those of x0 as at least 1-d; x itself keeps its shape.
        x0 = fnp.asarray(x0)
        vs = [fnp.zeros((n,), fnp.result_type(x0)) for n in fnp.shape(fnp.atleast_1d(x0))]
        return x0, fnp.zeros_like(x0), vs

    def update(i, g, state):
        x, m, vs = state
        shape = fnp.shape(x)
        x, m, g = fnp.atleast_1d(x), fnp.atleast_1d(m), fnp.reshape(g, fnp.shape(fnp.atleast_1d(x)))
        ndim = len(fnp.shape(x))
        expanded = [fnp.reshape(v, tuple(-1 if a == j else 1 for a in range(ndim))) for j, v in enumerate(vs)]
        accum = functools.reduce(fnp.minimum, expanded) + fnp.square(g)
        inv_sqrt = fnp.where(accum > 0, 1.0 / fnp.sqrt(fnp.where(accum > 0, accum, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [fnp.max(accum, axis=tuple(a for a in range(ndim) if a != j)) if ndim > 1 else accum
              for j in range(ndim)]
        return fnp.reshape(x, shape), fnp.reshape(m, shape), vs

    return init, update, _first


def _identity(x):
    return x


def _first(state):
    return state[0]


# --- step-size schedules ------------------------------------------------------------------
def constant(step_size) -> Schedule:
    """The schedule ``i -> step_size``."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """The schedule ``i -> step_size * decay_rate ** (i / decay_steps)``."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    """The schedule ``i -> step_size / (1 + decay_rate * i / decay_steps)`` (with
    ``staircase``, ``i / decay_steps`` rounded down)."""
    def schedule(i):
        t = fnp.floor(i / decay_steps) if staircase else i / decay_steps
        return step_size / (1 + decay_rate * t)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """From ``step_size`` at step 0 to ``final_step_size`` at ``decay_steps`` (and after),
    along ``(1 - i / decay_steps) ** power``."""
    def schedule(step_num):
        step_num = fnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values) -> Schedule:
    """``values[k]`` for steps ``i`` with ``k`` boundaries below ``i`` (``len(values) ==
    len(boundaries) + 1``)."""
    boundaries, values = np.asarray(boundaries), np.asarray(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError(f"piecewise_constant: boundaries and values must be sequences, got shapes "
                         f"{boundaries.shape} and {values.shape}")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError(f"piecewise_constant: boundaries length must be one shorter than values length, got "
                         f"{boundaries.shape[0]} boundaries and {values.shape[0]} values")

    def schedule(i):
        return fnp.asarray(values)[fnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule) -> Schedule:
    """A schedule from a schedule (returned as is) or a scalar step size (``constant``)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"make_schedule: expected a scalar step size or a schedule function, got "
                    f"{type(scalar_or_schedule).__name__} of shape {np.shape(scalar_or_schedule)}")


# --- utilities -----------------------------------------------------------------------------
def l2_norm(tree):
    """The l2 norm of all the leaves of ``tree`` taken together, as one vector."""
    leaves, _ = tree_flatten(tree)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale ``grad_tree`` down so its ``l2_norm`` is at most ``max_norm``."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: fnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """A leaf of ``unpack_optimizer_state``'s tree: one parameter's optimizer state."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):  # (so a JoinPoint unpacks like the state it marks)
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An ``OptimizerState`` as a plain pytree (the parameters' structure, with a
    ``JoinPoint`` holding each parameter's state), e.g. to pickle it."""
    flat_states, tree, subtrees = opt_state
    states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, flat_states)]
    return tree_unflatten(tree, [JoinPoint(s) for s in states])


def pack_optimizer_state(marked_pytree):
    """Inverse of ``unpack_optimizer_state``."""
    sentinels, tree = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: expected a pytree made by unpack_optimizer_state (JoinPoint leaves)")
    flat_states, subtrees = _unzip(tree_flatten(s.subtree) for s in sentinels)
    return OptimizerState(flat_states, tree, subtrees)
