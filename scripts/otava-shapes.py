#!/usr/bin/env python3
"""Series of several shapes and Apache Otava's change points on them, as the fixed expected
data of crates/history/tests/otava_shapes.rs.

    python3 -m venv /tmp/otava && /tmp/otava/bin/pip install apache-otava==0.8.0
    /tmp/otava/bin/python scripts/otava-shapes.py > crates/history/tests/data/otava-shapes.json

Otava is called as `otava analyze` calls it with its defaults (window 50, max p 0.001, min
magnitude 0): otava.analysis.compute_change_points(values).
"""
import json
from importlib.metadata import version

import numpy as np
from otava.analysis import compute_change_points

rng = np.random.default_rng(33)


def levels(n, shifts):
    """A level per point: 100, times each (at, factor) from its index on."""
    out = np.full(n, 100_000.0)
    for at, factor in shifts:
        out[at:] *= factor
    return out


def normal(n, cv=0.02):
    return 1.0 + cv * rng.standard_normal(n)


def shapes():
    yield "step", levels(60, [(40, 0.9)]) * normal(60)
    yield "step and its fix", levels(30, [(12, 0.84), (22, 1 / 0.84)]) * normal(30)
    yield "long step and its fix", levels(90, [(35, 0.88), (60, 1 / 0.88)]) * normal(90)
    yield "two steps", levels(120, [(30, 0.8), (80, 1.3)]) * normal(120)
    yield "slow drift", np.linspace(100_000.0, 80_000.0, 100) * normal(100)
    x = levels(60, []) * normal(60)
    x[30] *= 0.6
    yield "single outlier", x
    yield "heavy-tailed noise", levels(100, []) * (1.0 + 0.01 * rng.standard_t(2, 100))
    yield "step in heavy-tailed noise", levels(100, [(50, 0.85)]) * (
        1.0 + 0.01 * rng.standard_t(2, 100)
    )
    yield "noise", levels(100, []) * normal(100)


def main():
    out = []
    for name, x in shapes():
        x = [round(float(v), 1) for v in x]
        cps, _ = compute_change_points(list(x))
        out.append(
            {
                "name": name,
                "series": x,
                "otava": [
                    {
                        "index": int(c.index),
                        "forward_change_percent": round(float(c.stats.forward_change_percent()), 2),
                        "pvalue": float(c.stats.pvalue),
                    }
                    for c in cps
                ],
            }
        )
    head = {
        "otava": version("apache-otava"),
        "command": "scripts/otava-shapes.py: otava.analysis.compute_change_points(values) with defaults",
    }
    # One line per shape, so that a diff shows which shape changed.
    print(json.dumps(head)[:-1] + ', "shapes": [')
    print(",\n".join(json.dumps(s) for s in out))
    print("]}")


main()
