"""Public pytree utilities (``fg.tree_util``, as ``jax.tree_util``), and ``Partial``."""
import functools

from funcgrad.core.pytree import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    PyTreeDef,
    SequenceKey,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    tree_all,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
)

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef", "SequenceKey", "keystr",
    "register_dataclass", "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "tree_all", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
    "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce", "tree_structure",
    "tree_transpose", "tree_unflatten", "treedef_children", "treedef_is_leaf",
]


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its positional and keyword arguments
    are children (leaves), the function is static structure. So it can be passed to
    (and returned from) ``jit``, ``vmap`` and ``grad`` functions as an argument.

    >>> import funcgrad as fg, funcgrad.numpy as fnp
    >>> scale = Partial(fnp.multiply, 2.0)
    >>> fg.jit(lambda f, x: f(x))(scale, 3.0)
    Array(6.)
    """

    def __repr__(self):
        return "Partial(" + super().__repr__().partition("(")[2]


def _partial_flatten(p):
    return (p.args, p.keywords), p.func


def _partial_flatten_with_keys(p):
    return ((GetAttrKey("args"), p.args), (GetAttrKey("keywords"), p.keywords)), p.func


register_pytree_with_keys(Partial, _partial_flatten_with_keys, lambda func, c: Partial(func, *c[0], **c[1]),
                          _partial_flatten)
