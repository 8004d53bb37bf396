"""Child process of tests/test_contract.py (not a test module): runs every contract case with
its seeds split over all devices and saves each run's leaves, for the parent to compare with
its one-device runs.

Usage: python tests/_contract_child.py <folder>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from contract_cases import CASES, leaves_of, record_points  # noqa: E402

from decentral.runner import run  # noqa: E402

SEEDS = [3, 1, 4]


def main(folder: str) -> None:
    out = Path(folder)
    ran = []
    for name, build in sorted(CASES.items()):
        case = build()
        if not case.batch_invariant:
            continue             # declared batch-dependent: nothing to hold bit for bit
        ran.append(name)
        res = run(case.algorithm, case.params, SEEDS, case.num_steps,
                  record_fn=case.record_fn, record_context=case.record_context,
                  record_at=record_points(case), progress=False)
        leaves = leaves_of((res.records, res.final_state))
        np.savez(out / f"{name}.npz", **{f"leaf_{i:04d}": a for i, a in enumerate(leaves)})
    (out / "report.json").write_text(json.dumps({"devices": jax.device_count(),
                                                  "cases": ran}))


if __name__ == "__main__":
    main(sys.argv[1])
