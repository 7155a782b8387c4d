"""``from funcgrad import lax``: primitive-level operations (strict: no broadcasting or
promotion) and, as they land, structured control flow (cond, switch, while_loop,
fori_loop, scan)."""
from funcgrad.core.lax_api import *  # noqa: F401,F403
from funcgrad.core.lax_api import abs, max, min, pow, slice  # noqa: F401,A004
from funcgrad.transforms.control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: F401,E402


def select(pred, on_true, on_false):  # noqa: F811 - the lax_api version, documented here
    """Elementwise ``pred ? on_true : on_false`` (identical shapes and dtypes)."""
    from funcgrad.core.lax_api import select as _select

    return _select(pred, on_true, on_false)
# The jax.lax extras of issue #13, one module per idea (composites of the primitives).
from funcgrad.core.prims.fft import FftType, fft  # noqa: F401,E402
from funcgrad.lax import linalg  # noqa: F401,E402  (the submodule funcgrad.lax.linalg: JAX's signatures)
from funcgrad.lax.basic import clamp, expand_dims, optimization_barrier, reciprocal, rsqrt, square, stop_gradient  # noqa: F401,E402

# The rest of jax.lax's names (types, shapes, elementwise extras, general gather, collectives).
from funcgrad.lax.collectives import *  # noqa: F401,F403,E402
from funcgrad.lax.conv_shapes import *  # noqa: F401,F403,E402
from funcgrad.lax.convolution import (  # noqa: F401,E402
    ConvDimensionNumbers,
    conv,
    conv_dimension_numbers,
    conv_general_dilated,
    conv_general_dilated_patches,
    conv_transpose,
    conv_with_general_padding,
    padtype_to_pads,
)
from funcgrad.lax.cumulative import cumlogsumexp, cummax, cummin, cumprod, cumsum  # noqa: F401,E402
from funcgrad.lax.dot import Precision, dot, dot_general  # noqa: F401,E402  (JAX's precision keywords)
from funcgrad.lax.elementwise_extras import *  # noqa: F401,F403,E402
from funcgrad.lax.elementwise_extras import round  # noqa: F401,E402,A004  (JAX's rounding_method)
from funcgrad.lax.gather_ops import gather, index_take  # noqa: F401,E402
from funcgrad.lax.misc import *  # noqa: F401,F403,E402
from funcgrad.lax.reduction import reduce  # noqa: F401,E402,A004
from funcgrad.lax.scans import associative_scan, map  # noqa: F401,E402,A004
from funcgrad.lax.scatter_ops import (  # noqa: F401,E402
    ScatterDimensionNumbers,
    scatter_add,
    scatter_apply,  # noqa: F401,E402
    scatter_max,
    scatter_min,
    scatter_mul,
    scatter_sub,
)
from funcgrad.lax.shapes_and_fills import (  # noqa: F401,E402
    broadcast,
    broadcasted_iota,
    exp2,
    full,
    full_like,
    logistic,
    reduce_and,
    reduce_or,
    reduce_xor,
    squeeze,
)
from funcgrad.lax.slicing import (  # noqa: F401,E402
    dynamic_index_in_dim,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice_in_dim,
    index_in_dim,
    slice_in_dim,
)
from funcgrad.lax.solvers import custom_linear_solve, custom_root  # noqa: F401,E402
from funcgrad.lax.sorting import sort, sort_key_val, top_k  # noqa: F401,E402
from funcgrad.lax.structural import *  # noqa: F401,F403,E402
from funcgrad.lax.types import *  # noqa: F401,F403,E402
from funcgrad.lax.windowed import reduce_window  # noqa: F401,E402
from funcgrad.transforms.collectives import all_gather, axis_index, axis_size, pmax, pmean, pmin, psum  # noqa: F401,E402


def _primitive_handles() -> dict:
    """``{"exp_p": exp primitive, ...}``: every primitive but the run-time tape ones
    (funcgrad's own, in ``funcgrad.tapes``), as JAX's ``lax.exp_p``: the objects themselves,
    so an interpreter can test ``eqn.primitive is lax.exp_p``."""
    from funcgrad import tapes
    from funcgrad.core.primitive import PRIMITIVES, Primitive

    run_time = {v for v in vars(tapes).values() if isinstance(v, Primitive)}
    return {f"{p.name}_p": p for p in PRIMITIVES.values() if p not in run_time}


globals().update(_primitive_handles())
