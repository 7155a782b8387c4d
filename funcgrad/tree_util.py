"""Public pytree utilities (``fg.tree_util``)."""
from funcgrad.core.pytree import (  # noqa: F401
    PyTreeDef,
    register_dataclass,
    register_pytree_node,
    tree_all,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
)

__all__ = [
    "PyTreeDef", "register_dataclass", "register_pytree_node", "tree_all", "tree_flatten",
    "tree_leaves", "tree_map", "tree_structure", "tree_unflatten", "treedef_children",
    "treedef_is_leaf",
]
