"""Child process for tests/test_runner_subprocess.py (not a test module).

Usage:
    python tests/_runner_child.py kill <out_base> <checkpoint_dir> <kill_after_chunk|-1>
    python tests/_runner_child.py devices <out_base> [<checkpoint_dir>]

``kill``: run ALGORITHM with a checkpoint; after chunk ``k`` (if k >= 0) the hook SIGKILLs this
process, so nothing after the last checkpoint survives. ``devices``: run with whatever devices the
parent set up (XLA_FLAGS=--xla_force_host_platform_device_count=4) and 6 seeds (padded to 8);
with a checkpoint_dir it also stops a checkpointed run after chunk 2 (to resume elsewhere).
Both save their result with decentral.results.save_results.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from decentral.results import save_results
from decentral.runner import Algorithm, run


class State(NamedTuple):
    x: jax.Array  # [4, 2]


class Info(NamedTuple):
    normal: jax.Array  # the raw normal draws of the step
    bits: jax.Array  # raw uint32 bits of the step


def _init(key, params):
    return State(jax.random.normal(key, (4, 2)))


def _step(key, state, params, t, x_t):
    k_normal, k_bits = jax.random.split(key)
    noise = jax.random.normal(k_normal, state.x.shape)
    bits = jax.random.bits(k_bits, (3,))
    x = params * state.x + 0.1 * noise + x_t[:, None]
    return State(x), Info(noise, bits)


def record(state, ctx):
    return {"x": state.x, "normal": ctx.info.normal, "bits": ctx.info.bits}


ALGORITHM = Algorithm(_init, _step, name="child_walk", version="1")
PARAMS = np.float32(0.95)
XS = (np.arange(48 * 4, dtype=np.float32).reshape(48, 4) % 7) / 10.0
RUN_KW = dict(num_steps=48, record_every=2, chunk_size=8, record_fn=record, record_context=True,
              xs=XS)
KILL_SEEDS = [11, 12, 13]
DEVICE_SEEDS = [0, 1, 2, 3, 4, 5]


def arrays_of(result) -> dict:
    out = {f"rec_{k}": np.asarray(v) for k, v in result.records.items()}
    out["final_x"] = np.asarray(result.final_state.x)
    out["record_steps"] = result.record_steps
    out["seeds"] = result.seeds
    return out


def main(argv: list[str]) -> None:
    mode = argv[1]
    if mode == "kill":
        out_base, ckpt_dir, kill_after = argv[2], argv[3], int(argv[4])
        computed: list[int] = []

        def hook(chunk: int) -> None:
            computed.append(chunk)
            if chunk == kill_after:
                os.kill(os.getpid(), signal.SIGKILL)

        res = run(ALGORITHM, PARAMS, KILL_SEEDS, checkpoint_dir=ckpt_dir, on_chunk_end=hook,
                  progress=False, **RUN_KW)
        save_results(out_base, arrays_of(res), {"computed_chunks": computed, "seeds": KILL_SEEDS})
    elif mode == "devices":
        out_base = argv[2]
        res = run(ALGORITHM, PARAMS, DEVICE_SEEDS, progress=False, **RUN_KW)
        save_results(out_base, arrays_of(res), {"device_count": jax.device_count(),
                                                "seeds": DEVICE_SEEDS,
                                                "x64": bool(jnp.zeros(1).dtype == jnp.float64)})
        if len(argv) > 3:          # also leave a half-finished, padded checkpoint behind
            class Stop(Exception):
                pass

            def stop(chunk: int) -> None:
                if chunk == 2:
                    raise Stop

            try:
                run(ALGORITHM, PARAMS, DEVICE_SEEDS, progress=False, checkpoint_dir=argv[3],
                    on_chunk_end=stop, **RUN_KW)
            except Stop:
                pass
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv)
