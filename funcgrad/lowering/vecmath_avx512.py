"""AVX-512 float64 bodies with a 16-entry table held in two registers (``vecmath`` uses
them on 8-lane hosts).

A 16-entry table of doubles fits two zmm registers, and ``vpermt2pd``
(``llvm.x86.avx512.vpermi2var.pd.512``, ``lookup``) looks up 8 lanes in one
instruction, using the low 4 bits of each index. That narrows exp's reduced interval
16 times, so the polynomial shrinks from degree 13 to 7 (the loop is bound by the two
512-bit vector ports: fewer vector instructions are the speed-up).

exp: x = (16 m + j) ln2/16 + r with |r| <= ln2/32; the high part of ln2/16 has 42 bits,
so x - k * LN2_16_HI is exact for the |k| < 2^14 that reach here. e^x = 2^m * 2^(j/16)
* e^r with e^r = 1 + r + r^2 (1/2! + ... + 1/7! r^5) (first omitted term 2^-59) and
2^(j/16) = T_HI[j] + T_LO[j] (table values computed here with 40-digit decimals):
T_HI + (T_HI p + T_LO) rounds once, then ``vscalefpd`` multiplies by 2^m (exact here).
Arguments beyond ``vecmath.EXP_FAST`` go to the C library. Error: at most ~0.52 ulp.

log (of a positive normal u; ``log_fast`` sends vectors with other lanes to the whole
``vecmath._log`` in a cold branch): u = 2^k m with m in [0.671875, 1.34375) (the split
offset puts 1.0 in the middle of interval 10), j = the next 4 bits of m, r = m *
INV_C[j] - 1 (one FMA; |r| <= 1/32; INV_C[10] = 1 so r = m - 1 exactly around 1), log
u = k ln2 + LOG_C[j] + log1p(r) with log1p(r) = r - r^2/2 + r^3 (1/3 - r/4 + ... +
r^8/11) (first omitted term 2^-58 relative). k * LN2_HI + LOG_C_HI[j] is exact (both
multiples of 2^-42), r is added with Fast2Sum (|r| is below that sum unless it is 0)
and everything else goes into one tail. Error: at most ~0.6 ulp.

tanh: ``vecmath_tanh64`` (interval polynomials, coefficients by ``lookup``).
"""
from __future__ import annotations

import decimal
import functools
import math

from funcgrad.lowering.vecmath_ir import Fn

__all__ = ["exp", "log_fast", "log_positive", "lookup"]

LN2_16_HI = float.fromhex("0x1.62e42fefa3800p-5")  # ln2/16, 42 significant bits
LN2_16_LO = float.fromhex("0x1.ef35793c76730p-49")
EXP_P = [1.0 / math.factorial(n) for n in range(2, 8)]  # e^r - 1 - r = r^2 P(r)
LOG_OFF = 0x3FF0000000000000 - 21 * 2 ** 47  # bits of 0.671875: 1.0 mid-interval 10
LN2_HI42 = float.fromhex("0x1.62e42fefa3800p-1")  # ln 2 = LN2_HI42 + LN2_LO42 (+ ~2^-104)
LN2_LO42 = float.fromhex("0x1.ef35793c76730p-45")
LOG_Q = [(-1) ** n / (n + 3) for n in range(9)]  # 1/3, -1/4, ..., 1/11
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


@functools.cache
def _log_table() -> tuple:
    """(INV_C, LOG_C_HI, LOG_C_LO): INV_C[j] ~ 1/(middle of interval j), rounded to a
    double (INV_C[10] = 1), -log(INV_C[j]) = LOG_C_HI + LOG_C_LO with LOG_C_HI a
    multiple of 2^-42."""
    import struct

    ctx = decimal.Context(prec=40)
    inv, hi, lo = [], [], []
    for j in range(16):
        bits = LOG_OFF + j * 2 ** 48 + 2 ** 47
        mid = struct.unpack("<d", struct.pack("<q", bits))[0]
        c = 1.0 if j == 10 else 1.0 / mid
        logc = -ctx.ln(decimal.Decimal(c))
        h = math.ldexp(round(math.ldexp(float(logc), 42)), -42)
        inv.append(c)
        hi.append(h)
        lo.append(float(ctx.subtract(logc, decimal.Decimal(h))))
    return inv, hi, lo


def lookup(f: Fn, values: list, index: str) -> str:
    """values[index & 15] on 8 lanes (``index``: <8 x i64>)."""
    f.module.declare(_PERMUTE, f"declare <8 x double> @{_PERMUTE}(<8 x double>, <8 x i64>, <8 x double>)")
    return f._t(f"call <8 x double> @{_PERMUTE}(<8 x double> {f.table(values[:8])}, <8 x i64> {index}, "
                f"<8 x double> {f.table(values[8:])})")


def exp(f: Fn, x):
    """e^x for |x| <= 708 (other lanes: any value, replaced by the caller) on 8 float64
    lanes of an AVX-512 host."""
    magic = 1.5 * 2.0 ** 52  # x 16/ln2 + magic: k = round(x 16/ln2) in the low bits
    t = f.fma(x, 16 / math.log(2), magic)
    kf = f.sub(t, magic)
    r = f.fma(kf, -LN2_16_HI, x)  # exact
    r = f.fma(kf, -LN2_16_LO, r)
    r2 = f.mul(r, r)
    r2p = f.mul(r2, f.estrin(r, EXP_P, r2))  # e^r - 1 = r + r^2 P(r)
    hi, lo = _table()
    j = f.bits(t)  # (the permutes read its low 4 bits: those of k, magic's are 0)
    t_hi, t_lo = lookup(f, hi, j), lookup(f, lo, j)
    # * 2^m (m = floor(k/16), k/16 exact) by vscalefpd: one instruction for the
    # shift-add-shift-multiply of 2^m
    return f.scalef(f.add(t_hi, f.fma(t_hi, f.add(r, r2p), t_lo)), f.mul(kf, 1 / 16))


def log_positive(f: Fn, u, kadj):
    """log(u * 2^kadj) for positive normal finite lanes of ``u`` (``kadj``: an i64 vector
    or 0) on 8 float64 lanes of an AVX-512 host; other lanes get any value."""
    iu = f.bits(u)
    t = f.i("sub", iu, LOG_OFF)
    k = f.i("ashr", t, 52)
    m = f.fbits(f.i("add", f.i("and", t, 2 ** 52 - 1), LOG_OFF))  # iu - (k << 52)
    j = f.i("lshr", t, 48)  # (the permute reads the low 4 bits)
    inv, chi, clo = _log_table()
    r = f.fma(m, lookup(f, inv, j), -1.0)
    kf = f.sitofp(k if kadj == 0 else f.i("add", k, kadj))
    s1 = f.fma(kf, LN2_HI42, lookup(f, chi, j))  # exact
    hi = f.add(s1, r)
    e = f.sub(r, f.sub(hi, s1))  # Fast2Sum
    r2 = f.mul(r, r)
    poly = f.fma(f.mul(r2, r), f.estrin(r, LOG_Q, r2), f.mul(r2, -0.5))
    tail = f.add(f.fma(kf, LN2_LO42, lookup(f, clo, j)), f.add(e, poly))
    return f.add(hi, tail)


def log_fast(f: Fn, x):
    """(log x where x is a positive normal finite double, mask of the other lanes):
    the fast path without the subnormal scaling and the special-value selects
    (``vecmath._log`` computes those lanes in the cold branch). x - 2^-1022 as
    integers is below 0x7FE0... (unsigned) exactly for x in [2^-1022, max finite]."""
    bad = f.i("icmp uge", f.i("sub", f.bits(x), 0x0010000000000000), 0x7FE0000000000000)
    return log_positive(f, x, 0), bad
