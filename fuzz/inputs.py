"""The arrays a fuzzed program runs on: random values with adversarial ones mixed in.

Each argument's array depends only on the seed and the argument's name, so a minimized program
(`fuzz.minimize`) keeps the values of the arguments it keeps. With ``specials`` on, about one
element in six is an edge value: NaN, +-infinity, +-0, subnormals, large magnitudes; for i32,
0, +-1, INT_MIN and INT_MAX; otherwise floats are standard normal and integers in [-4, 4].
"""

from __future__ import annotations

import zlib

import numpy as np

from .program import Program, Value

FLOAT_SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1e15, -1e15, 88.0, -88.0,
                  1e-30)
"""Edge values of float32: NaN, infinities, signed zeros, subnormals (1e-40), large magnitudes,
the edges of ``exp``'s range (+-88) and a tiny normal."""
HALF_SPECIALS = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-7, 60000.0, -60000.0, 11.0)
"""Edge values of float16: subnormal 1e-7, near its largest finite value 65504."""
INT_SPECIALS = (0, 1, -1, np.iinfo(np.int32).min, np.iinfo(np.int32).max)

DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i1": np.bool_}


def array_for(arg: Value, seed: int, specials: bool) -> np.ndarray:
    rng = np.random.default_rng([seed, zlib.crc32(arg.name.encode())])
    dtype = DTYPES[arg.elem]
    shape = arg.shape
    if arg.elem == "i1":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if arg.elem == "i32":
        values = rng.integers(-4, 5, shape).astype(np.int64)
        edge = INT_SPECIALS
    else:
        values = rng.standard_normal(shape)
        edge = HALF_SPECIALS if arg.elem == "f16" else FLOAT_SPECIALS
    if specials:
        where = rng.random(shape) < 1 / 6
        picks = np.asarray(edge)[rng.integers(0, len(edge), shape)]
        values = np.where(where, picks, values)
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(dtype)


def make_inputs(program: Program, specials: bool = True) -> list[np.ndarray]:
    """One array per argument of ``program``, in order."""
    return [array_for(a, program.seed, specials) for a in program.args]
