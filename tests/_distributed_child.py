"""Child process for tests/test_runner_distributed.py and test_runner_layout.py (not a test).

Usage:
    python tests/_distributed_child.py <process_id> <num_processes> <port> <out_dir>

Each process joins the job on 127.0.0.1:<port> with 2 CPU devices (with one process: no
``jax.distributed``, 4 emulated devices), runs the CASES below with ``run`` exactly as one
process would (float64; every constant of the programs passed as an argument, replicated over
the job's devices), and saves every result it got to ``<out_dir>/p<process_id>.npz``. A
checkpointed run is interrupted after its second chunk and resumed by the same call. The parent
compares every process's results with a single-device run of the same cases.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import decentral.graphs as g
import decentral.runner.program as program
from decentral.consensus import consensus, consensus_params
from decentral.consensus_sa import consensus_sa, random_mrp, sa_params, td0_problem
from decentral.devices import initialize_distributed, use_all_cpu_cores
from decentral.push_sum import push_sum, push_sum_params, push_sum_sa
from decentral.runner import run
from decentral.schedules import constant

N = 64
SEEDS = [3, 1, 4, 15, 9]          # 5 seeds: padded on a seeds axis of 2 or 4 devices
RUN_KW = dict(num_steps=12, record_every=3, progress=False)


def algorithms():
    """The runs every process makes: name -> (algorithm, params, layout)."""
    cons = consensus(g.static(g.exponential(N, sparse=True), rule="row"), shape=2,
                     dtype=jnp.float64)
    push = push_sum(g.static(g.exponential(N), rule="column"), shape=2, dtype=jnp.float64)
    problem = td0_problem(*random_mrp(0, num_states=4, num_features=3, num_agents=N),
                          discount=0.8)
    sa = consensus_sa(problem, g.static(g.exponential(N, sparse=True), rule="row"))
    push_sa = push_sum_sa(problem, g.static(g.exponential(N), rule="column"))
    return {
        "consensus_default": (cons, consensus_params(), None),
        "consensus_seeds": (cons, consensus_params(), "seeds"),
        "consensus_agents": (cons, consensus_params(), "agents"),
        "consensus_both": (cons, consensus_params(), (2, 2)),
        "push_sum_agents": (push, push_sum_params(), "agents"),
        "consensus_sa_agents": (sa, sa_params(constant(0.05)), "agents"),
        "push_sum_sa_both": (push_sa, sa_params(constant(0.05)), (2, 2)),
    }


class Stop(Exception):
    """Raised by the chunk hook to interrupt a checkpointed run."""


def _stop_after_second(chunk):
    if chunk == 1:
        raise Stop


def main(pid: int, nproc: int, port: int, out_dir: str) -> None:
    """Join the job (or emulate 4 devices), run every case, save what this process got."""
    if nproc > 1:
        initialize_distributed(f"127.0.0.1:{port}", nproc, pid, cpu_devices=2)
    else:
        use_all_cpu_cores(4)
    jax.config.update("jax_enable_x64", True)
    # every constant of 64 bytes or more becomes an argument of the compiled programs, placed
    # on every device of the (multi-process) mesh: the parent's references embed them
    program.HOIST_MIN_BYTES = 64
    out = {}
    for name, (alg, params, layout) in algorithms().items():
        res = run(alg, params, SEEDS, layout=layout, **RUN_KW)
        for i, value in enumerate(jax.tree_util.tree_leaves(res.records)):
            out[f"{name}.{i}"] = np.asarray(value)
    cons, params, _ = algorithms()["consensus_both"]
    seen = []

    def where_x(state):
        jax.debug.inspect_array_sharding(state.x, callback=lambda sh: seen.append(sh.spec))
        return state.x

    for layout in ("agents", (2, 2), None):
        seen.clear()
        run(cons, params, SEEDS, layout=layout, record_fn=where_x, **RUN_KW)
        out[f"spec.{layout}"] = np.asarray(repr(tuple(seen[0])))
    ckpt = Path(out_dir) / "ckpt"
    try:
        run(cons, params, SEEDS, layout=(2, 2), checkpoint_dir=ckpt, chunk_size=3,
            on_chunk_end=_stop_after_second, **RUN_KW)
        raise AssertionError("the checkpointed run was not interrupted")
    except Stop:
        pass
    done = sorted(p.name for p in ckpt.iterdir())
    res = run(cons, params, SEEDS, layout=(2, 2), checkpoint_dir=ckpt, chunk_size=3, **RUN_KW)
    out["resumed.x"] = np.asarray(res.records.x)
    out["files_after_stop"] = np.asarray(",".join(done))
    out["process_count"] = np.asarray(jax.process_count())
    out["device_count"] = np.asarray(jax.device_count())
    np.savez(Path(out_dir) / f"p{pid}.npz", **out)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
