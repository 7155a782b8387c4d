"""``funcgrad.config.update``/``read`` and attribute reads for JAX's common flags."""
import os
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config, lax


@pytest.fixture(autouse=True)
def _restore_flags():
    saved = {n: config.read(n) for n in ("jax_disable_jit", "jax_debug_nans", "jax_debug_infs")}
    log = os.environ.get(config.LOG_COMPILES)
    yield
    for name, value in saved.items():
        config.update(name, value)
    if log is None:
        os.environ.pop(config.LOG_COMPILES, None)
    else:
        os.environ[config.LOG_COMPILES] = log


def test_enable_x64_true_is_a_no_op_and_false_warns_once():
    config.update("jax_enable_x64", True)
    assert config.jax_enable_x64 is True and config.read("jax_enable_x64") is True
    assert fnp.asarray(1.0).dtype == np.float64
    config._warned_x64[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config.update("jax_enable_x64", False)
        config.update("jax_enable_x64", False)
    assert len(caught) == 1 and "float64" in str(caught[0].message) and "from-jax" in str(caught[0].message)
    assert fnp.asarray(1.0).dtype == np.float64 and config.jax_enable_x64


def test_disable_jit_flag_runs_python():
    calls = []

    @fg.jit
    def f(x):
        calls.append(type(x))
        return x * 2

    for _ in range(3):
        f(np.ones(2))  # traced once, then the cached (and native) paths
    assert len(calls) == 1
    config.update("jax_disable_jit", True)
    assert config.jax_disable_jit
    np.testing.assert_array_equal(f(np.ones(2)), 2.0)
    assert calls[-1] is np.ndarray and len(calls) == 2
    config.update("jax_disable_jit", False)
    f(np.ones(2))
    assert len(calls) == 2
    with fg.disable_jit():  # the context manager and the flag are one switch
        assert config.jax_disable_jit
    assert not config.jax_disable_jit


def test_debug_nans_on_jit_outputs_every_dispatch_path():
    f = fg.jit(lambda x: fnp.log(x))
    for _ in range(20):  # warm the cached and native dispatch paths first
        f(np.array([-1.0]))
    config.update("jax_debug_nans", True)
    with pytest.raises(FloatingPointError, match=r"nan.*jit\(<lambda>\)"):
        f(np.array([-1.0]))
    np.testing.assert_array_equal(f(np.array([1.0])), [0.0])
    config.update("jax_debug_nans", False)
    assert np.isnan(f(np.array([-1.0]))[0])


def test_debug_nans_and_infs_on_eager_primitives():
    config.update("jax_debug_nans", True)
    with pytest.raises(FloatingPointError, match="log"):
        lax.log(np.array([-1.0]))
    with pytest.raises(FloatingPointError, match="nan"):
        fg.grad(lambda x: fnp.sqrt(x))(-1.0)
    lax.div(np.array([1.0]), np.array([0.0]))  # inf is not checked by debug_nans
    config.update("jax_debug_infs", True)
    with pytest.raises(FloatingPointError, match="inf"):
        lax.div(np.array([1.0]), np.array([0.0]))
    with pytest.raises(FloatingPointError, match="inf"):
        fg.jit(lambda x: 1.0 / x)(np.zeros(2))


def test_log_compiles_maps_to_the_switch(capsys):
    config.update("jax_log_compiles", True)
    assert config.jax_log_compiles and config.flag(config.LOG_COMPILES)
    fg.jit(lambda x: x + 1.0)(np.ones(3))
    assert "compiling" in capsys.readouterr().err
    config.update("jax_log_compiles", False)
    assert not config.jax_log_compiles


def test_platforms():
    config.update("jax_platform_name", "cpu")
    config.update("jax_platforms", "cpu")
    assert config.jax_platform_name == "cpu"
    with pytest.raises(ValueError, match="CPU only"):
        config.update("jax_platform_name", "gpu")
    with pytest.raises(ValueError, match="jax_platforms"):
        config.update("jax_platforms", "tpu")


def test_unknown_flag_is_a_typed_error_naming_it():
    with pytest.raises(config.UnknownConfigOption, match="jax_no_such_flag"):
        config.update("jax_no_such_flag", True)
    with pytest.raises(AttributeError, match="jax_no_such_flag"):
        config.jax_no_such_flag  # noqa: B018
    assert "jax_debug_nans" in config.JAX_FLAGS


def test_fg_config_is_the_module_with_its_switches():
    assert fg.config is config and callable(fg.config.update) and callable(config.flag)
