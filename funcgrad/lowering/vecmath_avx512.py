"""AVX-512 float64 bodies with a 16-entry table held in two registers (``vecmath`` uses
them on 8-lane hosts).

A 16-entry table of doubles fits two zmm registers, and ``vpermt2pd``
(``llvm.x86.avx512.vpermi2var.pd.512``) looks up 8 lanes in one instruction, using
the low 4 bits of each index. That narrows exp's reduced interval 16 times, so the
polynomial shrinks from degree 13 to 7: 26 vector instructions per 8 elements instead
of 39 (the loop is bound by the two vector ports, so this is the speed-up).

exp: x = (16 m + j) ln2/16 + r with |r| <= ln2/32; the high part of ln2/16 has 42 bits,
so x - k * LN2_16_HI is exact for the |k| < 2^14 that reach here. e^x = 2^m * 2^(j/16)
* e^r with e^r = 1 + r + r^2 (1/2! + ... + 1/7! r^5) (first omitted term 2^-59) and
2^(j/16) = T_HI[j] + T_LO[j] (table values computed here with 40-digit decimals):
T_HI + (T_HI p + T_LO) rounds once. Arguments beyond ``vecmath.EXP_FAST`` go to the C
library as before. Error: at most ~0.52 ulp.
"""
from __future__ import annotations

import decimal
import functools
import math

from funcgrad.lowering.vecmath_ir import Fn, hex_const

__all__ = ["exp"]

LN2_16_HI = float.fromhex("0x1.62e42fefa3800p-5")  # ln2/16, 42 significant bits
LN2_16_LO = float.fromhex("0x1.ef35793c76730p-49")
EXP_P = [1.0 / math.factorial(n) for n in range(2, 8)]  # e^r - 1 - r = r^2 P(r)
_PERMUTE = "llvm.x86.avx512.vpermi2var.pd.512"


@functools.cache
def _table() -> tuple:
    """(T_HI, T_LO): 2^(j/16) = T_HI[j] + T_LO[j] to ~2^-106, j = 0..15."""
    ctx = decimal.Context(prec=40)
    hi, lo = [], []
    for j in range(16):
        t = ctx.power(decimal.Decimal(2), ctx.divide(decimal.Decimal(j), decimal.Decimal(16)))
        h = float(t)
        hi.append(h)
        lo.append(float(ctx.subtract(t, decimal.Decimal(h))))
    return hi, lo


def _lookup(f: Fn, values: list, index: str) -> str:
    """values[index & 15] on 8 lanes (``index``: <8 x i64>)."""
    f.module.declare(_PERMUTE, f"declare <8 x double> @{_PERMUTE}(<8 x double>, <8 x i64>, <8 x double>)")

    def vec(vs):
        return "<" + ", ".join(f"double {hex_const(v)}" for v in vs) + ">"

    return f._t(f"call <8 x double> @{_PERMUTE}(<8 x double> {vec(values[:8])}, <8 x i64> {index}, "
                f"<8 x double> {vec(values[8:])})")


def exp(f: Fn, x):
    """e^x for |x| <= 708 (other lanes: any value, replaced by the caller) on 8 float64
    lanes of an AVX-512 host."""
    kf, k = f.round_magic(x, 16 / math.log(2))
    r = f.fma(kf, -LN2_16_HI, x)  # exact
    r = f.fma(kf, -LN2_16_LO, r)
    r2 = f.mul(r, r)
    p = f.fma(r2, f.estrin(r, EXP_P, r2), r)  # e^r - 1
    hi, lo = _table()
    t_hi, t_lo = _lookup(f, hi, k), _lookup(f, lo, k)
    v = f.add(t_hi, f.fma(t_hi, p, t_lo))
    return f.mul(v, f.pow2(f.i("ashr", k, 4)))
