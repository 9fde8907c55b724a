"""The regression settings A-G of FORMULAS.md Part V, shared by the tests.

ȳ ~ N(0, 3²) and ŷ = ȳ + N(0, 1) (seeded by the setting's letter), with:
A: M = 5, σ ~ U(0.2, 2), one σ_i = 0 · B: M = 5, d = 0 (pure noise) ·
C: M = 30, constant σ = 0.8 (a scalar) · D: M = 100, σ ~ U(0.1, 2), 20 % σ_i = 0 ·
E: M = 1000, log-normal σ with blocks of extremes (σ = 0, σ = 1e-8|d|,
σ = 1e-300, d = 0, σ = |d|/1000) · F: M = 10⁴, σ ~ U(0.05, 3), 20 % σ_i = 0 ·
G: M = 10⁴, constant σ = 1.5 (a scalar).
"""

import numpy as np

SIZES = {"A": 5, "B": 5, "C": 30, "D": 100, "E": 1000, "F": 10_000, "G": 10_000}


def formulas_setting(name: str):
    """``(y_true, y_pred, sigma)`` of setting ``name``; sigma is a float for C, G."""
    rng = np.random.default_rng(2024 + ord(name))
    m = SIZES[name]
    y_true = rng.normal(0, 3, m)
    y_pred = y_true + rng.normal(0, 1, m)
    if name == "A":
        sigma = rng.uniform(0.2, 2, m)
        sigma[2] = 0.0
    elif name == "B":
        y_pred = y_true.copy()
        sigma = rng.uniform(0.2, 2, m)
    elif name == "C":
        sigma = 0.8
    elif name in "DF":
        low = 0.1 if name == "D" else 0.05
        high = 2.0 if name == "D" else 3.0
        sigma = rng.uniform(low, high, m)
        sigma[rng.random(m) < 0.2] = 0.0
    elif name == "E":
        sigma = rng.lognormal(-0.5, 1.0, m)
        d = y_true - y_pred
        sigma[0:100] = 0.0
        sigma[100:200] = 1e-8 * np.abs(d[100:200])
        sigma[200:300] = 1e-300
        y_pred[300:400] = y_true[300:400]
        sigma[400:500] = np.abs(d[400:500]) / 1000
    else:  # G
        sigma = 1.5
    return y_true, y_pred, sigma
