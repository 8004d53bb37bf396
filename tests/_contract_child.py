"""Child process of tests/test_contract.py (not a test module): runs every contract case with
its seeds split over all devices and on one device, and writes which agree bit for bit.

Usage: python tests/_contract_child.py <report.json>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from contract_cases import CASES  # noqa: E402

from decentral.runner import run  # noqa: E402

SEEDS = [3, 1, 4]


def _leaves(tree):
    out = []
    for x in jax.tree_util.tree_leaves(tree):
        if jax.numpy.issubdtype(getattr(x, "dtype", None), jax.dtypes.prng_key):
            x = jax.random.key_data(x)
        out.append(np.asarray(x))
    return out


def main(path: str) -> None:
    report = {"devices": jax.device_count(), "cases": {}}
    for name, build in sorted(CASES.items()):
        case = build()
        kw = dict(record_fn=case.record_fn, record_context=case.record_context,
                  progress=False)
        many = run(case.algorithm, case.params, SEEDS, case.num_steps, **kw)
        one = run(case.algorithm, case.params, SEEDS, case.num_steps,
                  devices=jax.devices()[:1], **kw)
        a = _leaves((many.records, many.final_state))
        b = _leaves((one.records, one.final_state))
        same = len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y)
                                        for x, y in zip(a, b, strict=True))
        if same:
            report["cases"][name] = "identical"
        elif not case.batch_invariant:
            report["cases"][name] = "declared batch-dependent"
        else:
            worst = max(float(np.max(np.abs(x.astype(float) - y.astype(float))))
                        for x, y in zip(a, b, strict=True) if x.shape == y.shape and x.size)
            report["cases"][name] = f"differ (max abs {worst:.3g})"
    Path(path).write_text(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
