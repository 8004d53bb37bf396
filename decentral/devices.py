"""Use every CPU core: one CPU device per core, so the runner can shard seeds over them.

On a CPU, XLA runs one matrix product on one core: a Monte-Carlo run over many seeds uses a
second core only when the seeds are split over several *devices*. JAX exposes one CPU device by
default; ``use_all_cpu_cores()`` asks for one per core. It must run before JAX starts its
backend (before the first array is created or ``jax.devices()`` is called), so call it right
after ``import jax`` — the entry points ``python -m proofs_checks``, ``python -m figures`` and
``python -m benchmarks`` do so first thing. The runner then shards the seeds axis over all
devices by itself (``run(..., devices=None)``).

Library users do the same in their own scripts::

    import jax
    from decentral.devices import use_all_cpu_cores
    use_all_cpu_cores()            # before any JAX computation
    print(jax.devices())           # [CpuDevice(id=0), CpuDevice(id=1), ...]

The environment variable ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` has the same
effect when set before Python starts. On a GPU machine the call changes nothing there (the GPU
is the default device).

Example:
    >>> from decentral.devices import cpu_core_count
    >>> cpu_core_count() >= 1
    True
"""

from __future__ import annotations

import os
import warnings

import jax

from decentral._checks import check_int

__all__ = ["cpu_core_count", "use_all_cpu_cores", "initialize_distributed"]


def cpu_core_count() -> int:
    """Cores this process may run on (its CPU affinity where the OS reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not every OS has sched_getaffinity
        return max(1, os.cpu_count() or 1)


def _backends_started() -> bool:
    try:
        from jax._src import xla_bridge
    except ImportError:  # pragma: no cover - a JAX without this module: assume not started
        return False
    started = getattr(xla_bridge, "backends_are_initialized", None)
    return bool(started()) if callable(started) else False


def use_all_cpu_cores(count: int | None = None) -> int:
    """Expose ``count`` CPU devices (default: one per core) to JAX; returns the count in force.

    Call it before any JAX computation. If the backend has already started, nothing changes:
    a :class:`RuntimeWarning` says so and the current CPU device count is returned. A device
    count already forced through ``XLA_FLAGS`` is left as it is.

    Args:
        count: number of CPU devices; None for :func:`cpu_core_count`.
    """
    count = cpu_core_count() if count is None else check_int(count, "count")
    if "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", ""):
        return len(jax.devices("cpu"))
    if _backends_started():
        have = len(jax.devices("cpu"))
        if have != count:
            warnings.warn(
                f"use_all_cpu_cores({count}) came after JAX started its backend, which has "
                f"{have} CPU device(s); call it right after `import jax`, before any "
                "computation.", RuntimeWarning, stacklevel=2)
        return have
    jax.config.update("jax_num_cpu_devices", count)
    return count


def initialize_distributed(coordinator_address: str | None = None,
                           num_processes: int | None = None, process_id: int | None = None, *,
                           cpu_devices: int | None = None, **kwargs) -> None:
    """Join a multi-process job (``jax.distributed.initialize``), CPU collectives included.

    Call it first thing in every process of the job, before any JAX computation. After it,
    ``jax.devices()`` lists every process's devices and :func:`decentral.runner.run`, called
    the same way in every process, splits seeds (and agents) over all of them and returns the
    whole result in every process (see ``docs/scaling.md``).

    On CPUs the processes exchange data through gloo (JAX's TCP collectives). It is the
    default of jax 0.10.2, the oldest version this library allows; the option is set here
    anyway, so a JAX whose default is none still gets it. Arguments left None are discovered
    by JAX's cluster detection (SLURM, Open MPI, ...); on a laptop or in a test pass all three
    (e.g. ``"127.0.0.1:12355", 2, 0`` and ``..., 2, 1``).

    Args:
        coordinator_address: ``"host:port"`` of process 0's coordinator service.
        num_processes: processes in the job.
        process_id: this process's index in ``0 .. num_processes - 1``.
        cpu_devices: CPU devices of this process (:func:`use_all_cpu_cores`'s count); None
            keeps JAX's setting.
        **kwargs: passed on to ``jax.distributed.initialize`` (e.g. ``local_device_ids``,
            ``initialization_timeout``).

    Raises:
        RuntimeError: JAX's backend has already started in this process.
    """
    if _backends_started():
        raise RuntimeError("initialize_distributed() must run before any JAX computation "
                           "(JAX's backend has started in this process); call it right after "
                           "`import jax`.")
    if cpu_devices is not None:
        use_all_cpu_cores(cpu_devices)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator_address,
                               num_processes=num_processes, process_id=process_id, **kwargs)
