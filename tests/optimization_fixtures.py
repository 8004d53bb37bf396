"""The graph fixtures of the optimization tests, by the weights they carry (the fixtures
themselves are the claims' G1-G5 in proofs_checks.optimization.setups, N = 8)."""

from __future__ import annotations

from proofs_checks.optimization.setups import N, g1, g2, g3, g4, g5, ring_chords, weights

__all__ = ["N", "g1", "g2", "g3", "g4", "g5", "ring_chords", "weights", "ROW", "COLUMN",
           "DOUBLY"]

ROW = {"G1": lambda: g1("row"), "G2": lambda: g2("row"), "G4": g4}
COLUMN = {"G1": lambda: g1("column"), "G2": lambda: g2("column"),
          "G3": lambda: g3("column"), "G4": g4}
DOUBLY = {"G4": g4, "G5": g5}
