"""float64 tanh on AVX-512 hosts: 16 interval polynomials, coefficients by register permutes.

The double-double e^(2|x|) - 1 and the compensated division of ``vecmath._tanh`` cost ~70
vector instructions per 8 elements (the loop is bound by the two 512-bit vector ports);
this costs ~40. |x| is capped at 20 (tanh rounds to 1 from ~19.06; inf too) and split
into 16 slots by its exponent and first mantissa bit -- ``bits(max(|x|, 1/8)) >> 51``,
whose low 4 bits ``vpermt2pd`` reads, so one permute fetches a coefficient from a
16-entry table in two registers:

- slots 0 and 1 ([0, 1/4)): the odd polynomial x + c3 x^3 + ... + c15 x^15 (C1 = 1 and the
  even coefficients 0, so tiny and subnormal x come back exactly and -0 stays -0);
- slots 2..15: the half binades [1/4, 3/8), [3/8, 1/2), ..., [16, 24), [24, 32):
  tanh(B + y) = C0 + C1 y + ... + C16 y^16, y = |x| - B >= 0 exact, B the left end, so
  C0 = tanh(B) is at most the result and its rounding at most half an ulp of it.

One polynomial (Estrin for y^4 and up, Horner below) then gives the result; NaN stays
NaN (y is NaN) and the sign of x is copied back.

The coefficients are Chebyshev fits computed with mpmath at 60 digits (``fit``; their
error is below 2^-57 relative on every interval) and rounded to doubles; they are
stored below as bit patterns, so funcgrad needs no mpmath (tests/test_lowering_vecmath_simd.py
re-runs ``fit`` where mpmath is installed and compares). Error against a 40-digit
reference: see tests/test_lowering_vecmath_native.py (bound 1.5 ulp).
"""
from __future__ import annotations

import functools
import struct

from funcgrad.lowering.vecmath_avx512 import lookup
from funcgrad.lowering.vecmath_ir import Fn

__all__ = ["fit", "table", "tanh"]

DEGREE = 16
HORNER = 4  # the low-order coefficients evaluated by Horner steps (``tanh``)
CAP = 20.0


def _slots():
    """(left end, right end) of the 16 slots' intervals as exact fractions' floats."""
    out = [(0.0, 0.25), (0.0, 0.25)]
    for s in range(2, 16):
        e, q = divmod(s - 2, 2)
        lo = 2.0 ** (e - 2) * (1 + q / 2)
        out.append((lo, lo + 2.0 ** (e - 2) / 2))
    return out


def fit() -> tuple:
    """(B, C) computed from scratch with mpmath (needs mpmath; funcgrad uses ``table``):
    B[s] the left end of slot s, C[k][s] the coefficient of y^k."""
    import mpmath as mp

    mp.mp.dps = 60
    bs, rows = [], []
    for lo, hi in _slots():
        if lo == 0.0:  # tanh x = x + x^3 Q(x^2): Q on z in (0, 1/16], 7 terms
            def q(z):
                x = mp.sqrt(z)
                return (mp.tanh(x) - x) / (x * z)
            qs = mp.chebyfit(q, [mp.mpf(10) ** -40, mp.mpf(hi) ** 2], 7)[::-1]
            cs = [0.0, 1.0] + [v for k in qs for v in (0.0, float(k))] + [0.0]
        else:
            lo_m = mp.mpf(lo)
            cs = [float(v) for v in mp.chebyfit(lambda y: mp.tanh(lo_m + y), [0, mp.mpf(hi) - lo_m],
                                                DEGREE + 1)[::-1]]
        bs.append(lo)
        rows.append(cs)
    return bs, [list(col) for col in zip(*rows)]


_TABLE = (  # B, then C0 ... C16: 16 slots each (bit patterns of the doubles)
    "0000000000000000 0000000000000000 3fd0000000000000 3fd8000000000000 3fe0000000000000 3fe8000000000000"
    " 3ff0000000000000 3ff8000000000000 4000000000000000 4008000000000000 4010000000000000 4018000000000000"
    " 4020000000000000 4028000000000000 4030000000000000 4038000000000000",
    "0000000000000000 0000000000000000 3fcf597ea69a1c86 3fd6ef53de8c8fb0 3fdd9353d7568af3 3fe45323e552f228"
    " 3fe85efab514f394 3fecf6f9786df577 3feed9505e1bc3d4 3fefd77d111a0b00 3feffa81708a0b42 3fefffe63abe253c"
    " 3fefffff872a91f8 3feffffffff59f7c 3fefffffffffff1c 3ff0000000000000",
    "3ff0000000000000 3ff0000000000000 3fee149a052c16c2 3febe3fbb015a592 3fe92a946fa34394 3fe3173b1efa6ef5"
    " 3fdae0dc0f990c45 3fc72165282c6f72 3fb2162c262e0501 3f8434a517bbc5f5 3f55f85ad510ca6c 3ef9c5377a48b287"
    " 3e9e355b481863ee 3de4c1078f5b46e7 3d2c845cf4b41ce6 3bbaeba41e5c6a04",
    "0000000000000000 0000000000000000 bfcd78158f1b49f9 bfd3fd54e226f8f8 bfd742740ed7f1d0 bfd8403d3dda87bf"
    " bfd4786c26f14a68 bfc4efbd8fb38e3e bfb16f9d2bcd35bd bf841b109ca6aba8 bf55f495227eb0b5 bef9c522b959a03d"
    " be9e355ac447e0bf bde4c10783216b3c bd2c8403c4211a85 bbbaeb4fec1a79e5",
    "bfd5555555555551 bfd5555555555551 bfd071e413577375 bfc6dc4f6e8f88f9 bfb81d97b8141a42 3fa568057c923dd5"
    " 3fba85d22eb48a2a 3fb67b1f6914aa87 3fa58f4ff0ebddff 3f7a8acaf7d8b6ca 3f4d3c0e4897d0a1 3ef12dfb7a58eac8"
    " 3e9423909b0c603d 3ddbac09212c332d 3d230116c7b5f84f 3bb1f0b5a3122400",
    "0000000000000000 0000000000000000 3fc1e0db3fefb68e 3fc584c5e7f19e94 3fc51418dc445150 3fb989565d812ba3"
    " 3f9c60915a682d9b bf999050d6671b0f bf92520da078c4b9 bf6a03a0ef6a2378 bf3d27f669ead541 bee12dc42203af36"
    " be842389178db2f5 bdcbac006e89aa01 bd12f970f4a44d12 bba1e97d6c9fc2cc",
    "3fc111111110dad2 3fc111111110dad2 3fb28444c48d51b4 3f931a9afcba2a08 bf9be02f7c1f4a4a bfb064adc7a1c5a7"
    " bfa7b59c0fc69ccf bf65c9d3e625c91c 3f73957ad7121295 3f53f93f714b838b 3f27330f19f3d1a4 3ecb7bbbd7f9c9fc"
    " 3e701c460dbb846f 3db622ffae7fed34 3cfe2f0983f5f35a 3b8c7e6d598ea04f",
    "0000000000000000 0000000000000000 bfb1c382b0ed5edb bfb1d58913b0b20f bfa9cc7d1f0b8803 bf505c255f7ce9e8"
    " 3f93605ff6ce6f4a 3f7d0ec38817e9b0 bf24d93ef15a7f57 bf386cf8b8c4ce3d bf0e9949c74eb268 beb251907dbc9b76"
    " be5579d9f065cc47 bd9d82671afa1c14 bce3c84d1b67f980 bb72acc4be91e3b0",
    "bfaba1ba1ac8748a bfaba1ba1ac8748a bf8e574ca96d32b4 3f8a7c69d40566a7 3f9d49bca4315fe8 3f962a65b3c78993"
    " 3f63f92d31103922 bf703e4e1c1f88f8 bf456faff9e33c4c 3f16f7fb331a27d2 3ef11ae4941db3b1 3e94ed5e047966a5"
    " 3e3884da47afa5e2 3d80d86da76f1710 3cc5b0543c4a14ec 3b547979302b7fc8",
    "0000000000000000 0000000000000000 3f9f13eb66821668 3f978919028bb462 3f806632fee2fcc1 bf854b063fbb29e2"
    " bf7c253e623bde21 3f50a63c56f73a48 3f3c32ea1e29cca4 beeab8170a52cbc4 bed05a355367374e be74e8f04be4cdb6"
    " be186ba69d308b0d bd60c7299d52a882 bca3e5316851023e bb32c80af39dcb53",
    "3f9664f3e4c9bb5c 3f9664f3e4c9bb5c bf22f7dea85823c1 bf87b22b7eecbba5 bf8b97f5a58b6ef5 bf605be9509f14da"
    " 3f6ab5afa042a2e4 3f299c9a20ce4398 bf2598e09a9a9e90 beb1d87bfbc110a9 3eaa75948ac9bef1 3e528d6fc8df5831"
    " 3df56be4b2e77c80 3d3d6f7eb2b03b0f 3c7e3729d6171839 3b0c861933613fc6",
    "0000000000000000 0000000000000000 bf888258a4f587e7 bf76777203be5815 3f607cb0274cf3f9 3f721b0f40f21478"
    " 3f1b4d0eadc3f7e4 bf364635da86b4fd 3f02a35f68fd2acb 3ebbf254c268b557 be813b13307715cc be2d8c6f53775e99"
    " bdd084e02ecf007b bd16b31b9687cde3 bc52a657a406e939 bae19b0b20e96405",
    "bf8226a8b66370d4 bf8226a8b66370d4 3f63d8af02ed436c 3f78a1f3aaa0bcfd 3f7142579be776c4 bf590913d007faaa"
    " bf508846e6212ef6 3f26f5985f7c0a15 3eca2c525bc7a699 beaa0390ee524799 3e4e11a4ccc84d23 3e053828aa5597a1"
    " 3da606b2c3880a1f 3cee44aa4fa64f66 3c22447056be05f0 3ab13e9f08b76546",
    "0000000000000000 0000000000000000 3f716858b7714d9c 3f387eece334e812 bf629c93e8c7b0cf bf4736c4b113fec3"
    " 3f42b7de501b5e9d bf0530172769bbe2 bedd9f0dbf746ada 3e916ee8f9eab379 3dc88ff800bd0773 bddb4a6d4594ae54"
    " bd788acd11556dd3 bcc0dd0c3e354d31 bbeb88fd0d54a2fa ba79fe570e06cb96",
    "3f6d578fd2c2365b 3f6d578fd2c2365b bf5d420680046be5 bf63c62a157196af bf49b13fc145ea81 3f4cb18d434031d8"
    " bf11f6c17549ade7 bee474eff35821f5 3ecedeb70e49815a be7273f9d5e74ae7 bdfe7fe488911175 3dae7fbb1d3bf61d"
    " 3d45aba2a12d233b 3c8dc811f8ec9b4b 3baea0731627ad56 3a3ce97d6e926464",
    "0000000000000000 0000000000000000 bf56ba85c1feb30d 3f421268f715e069 3f5559054a1fb81b bf3052749d88c0f4"
    " bf18ffaf1b8f5b4d 3eeb74ecf1a5540f beb393b7888d0de4 3e4e2f02fcdd6a8e 3ddda09a634261d8 bd7b9d5757f47850"
    " bd0c094c712a1e12 bc53440362a3c613 bb679365a97cec06 b9f6417f0427ac7e",
    "bf55d8ce3a0d6b4b bf55d8ce3a0d6b4b 3f537a36efd40c99 3f495b089c759862 bf406c95526f2099 bf178f9d7090fc61"
    " 3f10098fa50216f7 bed6f4a52abf0afa 3e8e67936c7a8ee9 be211e0d2461383d bdad11e2ddc6f14a 3d41a3e1b5a2dbd6"
    " 3cc754d7da21e404 3c1008779803e5aa 3b165ca786dc692c 39a51c269e03e877",
    "0000000000000000 0000000000000000 bf20c543fe92179c bf3fdca3004cd4eb 3f02eaa2b202ab03 3f115f5f3228a15b"
    " beeb9d5d9a54f930 3eb05784e3ca5aad be5667ee26d42c36 3de40ae82c3c65e1 3d691ccae14b563c bcf7346b94b5f753"
    " bc72900f50e9407c bbb983471951fd73 bab3a52a1d942d45 b9428b9959ee5ec6",
)


@functools.cache
def table() -> tuple:
    """(B, C) from the stored bit patterns (the output of ``fit``)."""
    rows = [[struct.unpack("<d", bytes.fromhex(h)[::-1])[0] for h in line.split()] for line in _TABLE]
    return rows[0], rows[1:]


def tanh(f: Fn, x):
    """tanh on 8 float64 lanes of an AVX-512 host."""
    ax = f.abs(x)
    ax = f.sel(f.cmp("ogt", ax, CAP), CAP, ax)  # (one vminpd; NaN stays)
    j = f.i("lshr", f.bits(f.sel(f.cmp("olt", ax, 0.125), 0.125, ax)), 51)
    rot = (0x3FC0000000000000 >> 51) % 16  # slot s sits at entry (s + rot) mod 16

    def rotated(col):
        return [col[(p - rot) % 16] for p in range(16)]

    bs, cs = table()
    y = f.sub(ax, lookup(f, rotated(bs), j))  # exact (Sterbenz; slots 0, 1: B = 0)
    # C4 + ... + C16 y^12 by Estrin, then four Horner steps: the accuracy of Horner
    # (all-Estrin: 3.1 ulp) with a dependency chain of ~9 FMAs instead of 16 (all-Horner
    # ran 1.9 ns/element: the out-of-order window filled with the waiting chain)
    r = f.estrin(y, [lookup(f, rotated(col), j) for col in cs[HORNER:]])
    for col in reversed(cs[:HORNER]):
        r = f.fma(r, y, lookup(f, rotated(col), j))
    return f.copysign(r, x)
