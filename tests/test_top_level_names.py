"""JAX's top-level names in ``funcgrad``: configuration contexts (with the checks they turn
on), ``ensure_compile_time_eval``, process queries, ``typeof``, ``clear_caches``,
``no_tracing``, ``fwd_and_bwd`` and the ``dtypes``/``dlpack``/``stages``/``version`` modules."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config
from funcgrad.errors import TypePromotionError


def test_flag_contexts_set_and_restore():
    assert not config.read("jax_debug_nans")
    with fg.debug_nans(True):
        assert config.read("jax_debug_nans")
        with pytest.raises(FloatingPointError):
            fg.jit(lambda x: fnp.log(x))(-1.0)
    assert not config.read("jax_debug_nans")
    with fg.debug_infs():
        with pytest.raises(FloatingPointError):
            fg.jit(lambda x: 1.0 / x)(0.0)
    with fg.enable_checks():
        assert config.flag(config.DEBUG)
    with fg.enable_x64(True), fg.default_matmul_precision("highest"):
        assert config.read("jax_default_matmul_precision") == "highest"
    assert config.read("jax_default_matmul_precision") is None


def test_numpy_rank_promotion():
    a, b = np.ones((2, 3)), np.ones(3)
    with fg.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            fnp.add(a, b)
        with pytest.raises(ValueError, match="rank_promotion"):
            fg.jit(fnp.multiply)(a, b)
        np.testing.assert_array_equal(fnp.add(a, 1.0), a + 1)  # scalars broadcast freely
        np.testing.assert_array_equal(fnp.add(a, np.ones((1, 3))), a + 1)  # same rank
    with fg.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="rank_promotion"):
            fnp.subtract(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(fnp.add(a, b), a + b)  # "allow" again, the fast path too
    with pytest.raises(ValueError, match="one of"):
        config.update("jax_numpy_rank_promotion", "sometimes")


def test_numpy_dtype_promotion_strict():
    f32, i32 = np.ones(2, np.float32), np.ones(2, np.int32)
    fnp.add(f32, i32)  # (a cached eager plan first)
    with fg.numpy_dtype_promotion("strict"):
        with pytest.raises(TypePromotionError, match="float32, int32"):
            fnp.add(f32, i32)
        with pytest.raises(TypePromotionError):
            fg.jit(fnp.add)(f32, i32)
        assert fnp.multiply(f32, 2.0).dtype == np.float32  # weak Python scalars still promote
        assert fnp.add(f32, f32).dtype == np.float32
    assert fnp.add(f32, i32).dtype == np.float64


def test_ensure_compile_time_eval_gives_concrete_values_under_jit():
    def f(x):
        with fg.ensure_compile_time_eval():
            scale = fnp.sum(fnp.arange(4.0))  # 6.0, computed while tracing
            branch = bool(scale > 5)  # a Python branch on it
        return x * scale if branch else x

    np.testing.assert_array_equal(fg.jit(f)(np.ones(2)), [6.0, 6.0])
    jaxpr = fg.make_jaxpr(f)(np.ones(2))
    staged = {e.primitive.name for e in jaxpr.jaxpr.eqns}
    assert "mul" in staged and not staged & {"iota", "reduce_sum"}  # arange/sum ran while tracing
    with pytest.raises(fg.errors.TracerBoolConversionError):
        fg.jit(lambda x: bool(x > 0))(1.0)  # traced values stay traced


def test_process_and_device_queries():
    assert (fg.process_count(), fg.process_index(), fg.process_indices()) == (1, 0, [0])
    assert (fg.host_count(), fg.host_id(), fg.host_ids()) == (1, 0, [0])
    assert isinstance(fg.devices()[0], fg.Device)
    with fg.default_device(fg.devices()[0]):
        pass
    with pytest.raises(ValueError, match="not a funcgrad device"):
        with fg.default_device("tpu:0"):
            pass
    text = fg.print_environment_info(return_string=True)
    assert f"numpy:     {np.__version__}" in text and fg.version.__version__ in text
    assert fg.version.__version_info__ == tuple(int(p) for p in fg.__version__.split("."))


def test_typeof_and_named_scope():
    aval = fg.typeof(np.ones((2, 3), np.float32))
    assert aval.shape == (2, 3) and aval.dtype == np.float32 and not aval.weak_type
    assert fg.typeof(1.0).weak_type
    seen = []
    fg.make_jaxpr(lambda x: seen.append(fg.typeof(x)) or x)(np.ones(4))
    assert seen[0].shape == (4,)
    with fg.named_scope("layer1"):
        np.testing.assert_array_equal(fg.jit(fnp.sin)(0.0), 0.0)
    with pytest.raises(TypeError, match="name must be a str"):
        with fg.named_scope(3):
            pass


def test_clear_caches_and_no_tracing():
    f = fg.jit(lambda x: x + 1)
    f(1.0)
    assert f.cache_size() == 1
    with fg.no_tracing():
        assert f(2.0) == 3.0  # cached: no tracing
        with pytest.raises(RuntimeError, match="no_tracing"):
            f(np.ones(3))
    fg.clear_caches()
    assert f.cache_size() == 0
    assert f(2.0) == 3.0 and f.cache_size() == 1


def test_effects_barrier_and_copy_to_host_async(capsys):
    fg.jit(lambda x: fg.debug.print("x={}", x) or x)(1.5)
    fg.effects_barrier()
    assert "x=1.5" in capsys.readouterr().out
    assert fg.copy_to_host_async(np.ones(2)) is None


def test_fwd_and_bwd_matches_vjp():
    def f(x, w):
        return fnp.tanh(x @ w)

    x, w = np.random.default_rng(0).normal(size=(2, 3, 3))
    fwd, bwd = fg.fwd_and_bwd(f, argnums=(0, 1))
    y, res = fwd(x, w)
    ct = np.ones((3, 3))
    expected_y, pullback = fg.vjp(f, x, w)
    np.testing.assert_allclose(y, expected_y, rtol=1e-14)
    for got, want in zip(bwd(res, ct), pullback(ct)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    fwd1, bwd1 = fg.fwd_and_bwd(lambda x, w: (f(x, w), "aux"), argnums=1, has_aux=True, jitted=False)
    y1, res1, aux = fwd1(x, w)
    assert aux == "aux"
    np.testing.assert_allclose(bwd1(res1, ct), pullback(ct)[1], rtol=1e-13)


def test_dtypes_module():
    d = fg.dtypes
    assert d.result_type(np.float32, 1.0) == np.float32 and d.result_type(np.int32, np.float32) == np.float64
    assert d.result_type(np.int8, 2, return_weak_type_flag=True) == (np.int8, False)
    assert d.result_type(1.0, return_weak_type_flag=True) == (np.float64, True)
    assert d.canonicalize_dtype(np.float64) == np.float64 and d.itemsize_bits(np.int16) == 16
    assert d.scalar_type_of(np.float32(1)) is float and d.scalar_type_of(np.uint8(1)) is int
    assert d.issubdtype(np.float32, np.floating) and not d.issubdtype(np.int32, np.floating)
    assert d.issubdtype(fg.random.key(0).dtype, d.prng_key) and not d.issubdtype(np.float32, d.extended)
    assert d.float0 == fg.float0 and d.float0.itemsize == 0
    assert np.zeros(2, d.float0).shape == (2,)
    with pytest.raises(fg.errors.UnsupportedDtypeError, match="bfloat16"):
        d.canonicalize_dtype(d.bfloat16)


def test_dlpack_and_stages():
    src = np.arange(4.0)
    out = fg.dlpack.from_dlpack(src)
    src[0] = 9.0
    np.testing.assert_array_equal(out, [0.0, 1.0, 2.0, 3.0])  # a value of its own
    assert fg.dlpack.is_supported_dtype(np.float32) and not fg.dlpack.is_supported_dtype(np.float16)
    jitted = fg.jit(lambda x: x * 2)
    assert isinstance(jitted, fg.stages.Wrapped)
    lowered = jitted.lower(1.0)
    assert isinstance(lowered, fg.stages.Lowered) and isinstance(lowered.compile(), fg.stages.Compiled)
    assert float(lowered.compile()(4.0)) == 8.0
    assert fg.experimental.ode.odeint is not None
