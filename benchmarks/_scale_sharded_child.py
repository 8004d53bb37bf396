"""Child process of the ``scale.sharded`` benchmark: one side of a sharded-vs-unsharded timing
(not a benchmark itself).

Usage::

    python -m benchmarks._scale_sharded_child '{"mode": "agents", "devices": 2, "N": ..., ...}'

``mode`` is ``"single"`` (one CPU device, the reference), ``"agents"`` (``devices`` CPU devices in
this process, the agents split over them: ``run(..., layout="agents")``) or ``"process"`` (one
process of a ``nproc``-process job on ``127.0.0.1:port``, each with ``devices`` CPU devices,
joined through :func:`decentral.devices.initialize_distributed`, the agents split over every
process's devices). The case is plain consensus of d float32 values per agent on
``exponential(N, sparse=True)`` (row weights), S seeds: a short run compiles the program, then
``repeats`` timed runs of T steps. Process 0 (the only one in the first two modes) saves the
final state to ``out`` (``.npy``) and prints one JSON line prefixed by
:data:`benchmarks.bench_scale.CHILD_MARKER` with the timings.
"""

from __future__ import annotations

from decentral.devices import initialize_distributed, use_all_cpu_cores

if __name__ == "__main__":
    import json as _json
    import sys as _sys

    if len(_sys.argv) == 2:                                   # before JAX starts its backend
        _spec = _json.loads(_sys.argv[1])
        if _spec["mode"] == "process":
            initialize_distributed(f"127.0.0.1:{_spec['port']}", _spec["nproc"], _spec["pid"],
                                   cpu_devices=_spec["devices"])
        else:
            use_all_cpu_cores(1 if _spec["mode"] == "single" else _spec["devices"])

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import decentral.graphs as g  # noqa: E402
from benchmarks.bench_scale import CHILD_MARKER, short_record_points  # noqa: E402
from benchmarks.harness import device_summary  # noqa: E402
from decentral.consensus import consensus, consensus_params  # noqa: E402
from decentral.runner import run  # noqa: E402

__all__ = ["LAYOUTS", "sharded_case", "main"]

LAYOUTS = {"single": None, "agents": "agents", "process": "agents"}
"""The ``run`` layout of each mode."""


def _mean(state):
    return state.x.mean(axis=0)


def sharded_case(*, mode: str, N: int, S: int, d: int, T: int, warm_steps: int = 3,
                 repeats: int = 1, **unused: Any) -> dict[str, Any]:
    """Build, compile (a short run), time ``repeats`` runs of T steps; returns the timings and
    the final state ``x`` ``[S, N, d]`` (as numpy)."""
    del unused
    start = time.perf_counter()
    alg = consensus(g.static(g.exponential(N, sparse=True), rule="row"), shape=d,
                    dtype=jnp.float32)
    build_s = time.perf_counter() - start
    params, seeds, layout = consensus_params(), list(range(S)), LAYOUTS[mode]
    start = time.perf_counter()
    warm = run(alg, params, seeds, warm_steps, record_at=short_record_points(warm_steps),
               record_fn=_mean, layout=layout, progress=False)
    jax.block_until_ready(warm.final_state)
    warm_s = time.perf_counter() - start
    del warm
    times, res = [], None
    for _ in range(repeats):
        res = None
        start = time.perf_counter()
        res = run(alg, params, seeds, T, record_at=[0, T], record_fn=_mean, layout=layout,
                  progress=False)
        jax.block_until_ready(res.final_state)
        times.append(time.perf_counter() - start)
    return {"build_s": build_s, "warm_s": warm_s, "times_s": times,
            "x": np.asarray(res.final_state.x)}


def main(argv: list[str]) -> int:
    """Run the case given as JSON; returns the exit status."""
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    result = sharded_case(**spec)
    if jax.process_index() == 0:
        np.save(spec["out"], result.pop("x"))
        result.update(device=device_summary(), devices=len(jax.devices()),
                      processes=jax.process_count())
        print(CHILD_MARKER + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
