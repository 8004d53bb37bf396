"""Child process of the ``runner.sharding`` benchmark (not a benchmark itself).

Usage::

    python -m benchmarks._sharding_child '{"device_count": 2, "kwargs": {...}}'

Sets the CPU device count with :func:`decentral.devices.use_all_cpu_cores` before JAX starts
its backend, runs :func:`benchmarks.bench_sharding.sharded_run` with ``kwargs`` and prints its
result as one JSON line prefixed by :data:`benchmarks.bench_sharding.CHILD_MARKER`.
"""

from __future__ import annotations

import json
import sys

from decentral.devices import use_all_cpu_cores


def main(argv: list[str]) -> int:
    """Run one side of the sharding benchmark; returns the exit status."""
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    spec = json.loads(argv[0])
    use_all_cpu_cores(int(spec["device_count"]))          # before anything starts JAX

    from benchmarks.bench_sharding import CHILD_MARKER, sharded_run

    result = sharded_run(**spec["kwargs"])
    print(CHILD_MARKER + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
