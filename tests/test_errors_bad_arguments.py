"""Bad arguments raise typed errors that name the function and the argument (issue #12):
never an internal error from deep inside funcgrad, never silent acceptance."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


@pytest.mark.parametrize("args", [(0, np.inf), (0, 1, np.nan), (-np.inf, 0)])
def test_arange_of_infinite_bounds_names_arange(args):
    with pytest.raises(ValueError, match="arange"):
        fnp.arange(*args)
    with pytest.raises(ValueError, match="arange"):
        fg.jit(lambda: fnp.arange(*args))()
