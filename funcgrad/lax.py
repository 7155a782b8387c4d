"""``from funcgrad import lax``: primitive-level operations (strict: no broadcasting or
promotion) and, as they land, structured control flow (cond, switch, while_loop,
fori_loop, scan)."""
from funcgrad.core.lax_api import *  # noqa: F401,F403
from funcgrad.core.lax_api import slice, max, min, abs, pow, round  # noqa: F401,A004
