#!/usr/bin/env python3
"""Fits the polynomials of memplan-kernels/src/fast_math.rs and prints them rounded to f32.

    python3 memplan-kernels/tools/fit_fast_math.py     (needs numpy)

Each is a minimax fit on Chebyshev-distributed points, by Lawson's algorithm (weighted least
squares, the weights multiplied by the errors after each round, so the largest errors gain
weight until the error curve levels out). The error printed is the fit's, in exact arithmetic;
the Rust tests measure what the f32 evaluation gives.
"""

import math

import numpy as np


def minimax(basis, target, weight, rounds=200):
    """Coefficients c minimising max |weight * (basis @ c - target)|, and that maximum."""
    lawson = np.full(len(target), 1.0 / len(target))
    best = None
    for _ in range(rounds):
        w = np.sqrt(lawson) * weight
        c, *_ = np.linalg.lstsq(basis * w[:, None], target * w, rcond=None)
        err = np.abs(weight * (basis @ c - target))
        if best is None or err.max() < best[1]:
            best = (c, err.max())
        lawson *= err
        lawson /= lawson.sum()
    return best


def powers(v, degree):
    return np.vstack([v**k for k in range(degree + 1)]).T


def show(name, c, err, kind):
    print(f"{name}: {[str(np.float32(v)) for v in c]}  ({kind} error {err:.2e})")


erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)

# exp: e^r = 1 + (r + r^2 q(r)) on |r| <= ln2 / 2 (a little wider), relative error.
r = np.cos(np.linspace(0, np.pi, 4001)) * math.log(2) / 2 * 1.0005
r = r[np.abs(r) > 1e-6]
show("EXP_Q", *minimax(powers(r, 4), (np.expm1(r) - r) / r**2, r**2 / np.exp(r)), "relative")

# tanh: a + a (s q(s)), s = a^2, on [0, 0.625], relative error.
a = np.cos(np.linspace(0, np.pi / 2, 3001)) * 0.625 * 1.001
a = a[a > 1e-4]
show("TANH_Q", *minimax(powers(a * a, 4), (np.tanh(a) - a) / a**3, a**3 / np.tanh(a)), "relative")

# erf near 0: a + a q(s), s = a^2, on [0, 0.875], relative error.
a = np.cos(np.linspace(0, np.pi / 2, 3001)) * 0.875 * 1.001
a = a[a > 1e-4]
show("ERF_Q", *minimax(powers(a * a, 5), erf(a) / a - 1, a / erf(a)), "relative")

# erf from 0.875: ln erfc(a) = P(a - 0.875) on [0.875, 4], weighted by erfc(a) (so the error is
# the absolute error of erf = 1 - e^P).
a = (np.cos(np.linspace(0, np.pi, 4001)) + 1) / 2 * (4.0 - 0.875) + 0.875
show("LN_ERFC_P", *minimax(powers(a - 0.875, 6), np.log(erfc(a)), erfc(a)), "absolute (of erf)")
