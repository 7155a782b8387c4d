"""The environment switches of ``funcgrad.config``: read at call time, one place, dumps."""
import os

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import config
from funcgrad.core.typecheck import debug_checks_enabled


def test_flag_is_read_when_consulted(monkeypatch):
    monkeypatch.setenv(config.LOG_COMPILES, "1")
    assert config.flag(config.LOG_COMPILES)
    monkeypatch.setenv(config.LOG_COMPILES, "0")
    assert not config.flag(config.LOG_COMPILES)
    monkeypatch.delenv(config.LOG_COMPILES)
    assert not config.flag(config.LOG_COMPILES)


def test_debug_switch_drives_the_type_checker(monkeypatch):
    monkeypatch.setenv(config.DEBUG, "1")
    assert debug_checks_enabled()
    monkeypatch.setenv(config.DEBUG, "")
    assert not debug_checks_enabled()


def test_unknown_switch_is_a_clear_error():
    with pytest.raises(KeyError, match="FUNCGRAD_NO_SUCH"):
        config.flag("FUNCGRAD_NO_SUCH")


def test_every_switch_read_in_the_package_is_declared():
    # A switch read anywhere but through config would escape the README's list.
    root = os.path.dirname(fg.__file__)
    for dirpath, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py") and name != "config.py":
                with open(os.path.join(dirpath, name)) as f:
                    text = f.read()
                assert "os.environ" not in text and "getenv" not in text, name


def test_readme_debugging_section_names_every_switch():
    readme = os.path.join(os.path.dirname(os.path.dirname(fg.__file__)), "docs", "guide", "debugging.md")
    if not os.path.exists(readme):
        pytest.skip("docs/ not next to the package (installed copy)")
    with open(readme) as f:
        text = f.read()
    debugging = text
    for name in list(config.SWITCHES) + list(config.SETTINGS):
        assert name in debugging, name


def test_dump_jaxpr_prints_each_stage_with_the_function_name(monkeypatch, capfd):
    monkeypatch.setenv(config.DUMP_JAXPR, "1")

    def scaled_sum(x, w):
        y = fnp.sin(x) * 2.0 + 1.0
        return fnp.sum(y * y) + fnp.sum(w @ y)

    f = fg.jit(scaled_sum)
    f(np.ones(4), np.ones((3, 4)))
    err = capfd.readouterr().err
    stages = ["jit(scaled_sum): jaxpr (traced)", "jit(scaled_sum): jaxpr (simplified",
              "jit(scaled_sum): fused program"]
    positions = [err.find("--- funcgrad: " + s) for s in stages]
    assert all(p >= 0 for p in positions), err
    assert positions == sorted(positions)
    fused = err[positions[2]:]
    assert "nest 1: " in fused and "= reduce_sum" in fused and "= dot_general" in fused
    # The cached second call compiles nothing, so it dumps nothing.
    f(np.ones(4), np.ones((3, 4)))
    assert "--- funcgrad:" not in capfd.readouterr().err


def test_dump_jaxpr_off_prints_nothing(monkeypatch, capfd):
    monkeypatch.delenv(config.DUMP_JAXPR, raising=False)
    monkeypatch.delenv(config.DUMP_IR, raising=False)
    fg.jit(lambda x: x * 3.0 - 1.0)(np.ones(3))
    assert "--- funcgrad:" not in capfd.readouterr().err


def test_dump_ir_prints_both_llvm_stages(monkeypatch, capfd):
    monkeypatch.setenv(config.DUMP_IR, "1")

    def cubed(x):
        return x * x * x

    fg.jit(cubed)(np.ones(5))
    err = capfd.readouterr().err
    assert "--- funcgrad: jit(cubed): LLVM IR (unoptimised)" in err
    assert "--- funcgrad: jit(cubed): LLVM IR (optimised)" in err
