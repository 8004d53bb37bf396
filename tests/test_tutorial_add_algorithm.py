"""The tutorial docs/tutorials/add_algorithm.md runs as written.

Its ```python blocks are executed in order, as one script, in a temporary working folder; then
the objects the page built are checked against what its text says (the sweep's shape, the
resume that computes only the remaining chunks, bit identity with the uninterrupted run, the
refusals). If the tutorial's code stops running or stops doing what the page says, this fails.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from test_docs_site import DOCS, python_blocks, run_blocks

PAGE = DOCS / "tutorials" / "add_algorithm.md"


def test_the_tutorial_runs_and_does_what_it_says(tmp_path: Path, monkeypatch, capsys):
    assert len(python_blocks(PAGE)) >= 6
    ns = run_blocks(PAGE, tmp_path, monkeypatch)
    printed = capsys.readouterr().out

    # the first run: the team average reaches the optimum, the agents keep disagreeing
    first = ns["run"](ns["alg"], ns["DGDParams"](np.float32(0.1), np.float32(0.0)), seeds=[0],
                      num_steps=500, record_at=[500], record_fn=ns["errors"])
    assert first.records["optimality"][0, -1] < 1e-4
    assert first.records["disagreement"][0, -1] > 0.5

    # the sweep: [step sizes, seeds, records]; the disagreement shrinks with the step size
    res = ns["res"]
    assert res.records["disagreement"].shape == (3, 32, 8)
    assert np.all(np.diff(ns["late"]["disagreement"]) < 0)

    # interrupted after two chunks, resumed for the other two, bit-identical, then complete
    assert "interrupted; saved:" in printed
    assert "chunks computed on resume: [2, 3]" in printed
    assert "bit-identical to the uninterrupted run: True" in printed
    assert "chunks computed the third time: []" in printed

    # the refusals name what differs
    assert "algorithm.config.targets" in printed
    assert "params sweep entry 1: params.step_size" in printed
    assert not any((tmp_path / "cwd").iterdir())
