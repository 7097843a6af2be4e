"""One local Ray for the Ray tests' command-line runs, started once in a process of its own.

Each ``assay run --engine ray`` would otherwise start (and stop) a whole local Ray, which is
most of such a test's time. Started here with what the engine gives a local Ray (this machine's
CPUs, its object store size: ``RayPlace``), its address goes to the runs as ``RAY_ADDRESS``, the
engine's way onto a cluster: every run is still a job of its own (its own workers and actors;
Ray shares none between jobs). The test process itself never starts Ray, so the tests that
start it in-process (a service grading on Ray) keep theirs. Ended by closing the holder's
stdin: it shuts its Ray down (``ray.shutdown`` stops what it started); killed only if it hangs.

Run as a script, it is the holder: it starts Ray, prints the address, waits for end of input.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def local_ray() -> Iterator[dict[str, str]]:
    """A local Ray kept by a holder process for the block; yields the variables that lead a run
    onto it: ``RAY_ADDRESS``, and the token Ray requires of a client (``RAY_AUTH_TOKEN``)."""
    token = secrets.token_hex(16)  # this Ray's own, never a token file shared with other Rays
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
    holder = subprocess.Popen([sys.executable, __file__], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline().strip()  # the address, or nothing when the holder failed
        assert line.startswith("address="), f"the Ray holder did not start Ray (exit {holder.poll()})"
        yield {"RAY_ADDRESS": line.removeprefix("address="), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
    finally:
        try:
            holder.communicate(timeout=60)  # closes stdin: the holder shuts Ray down and exits
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait(timeout=10)


def _hold() -> None:
    import logging

    import ray

    from assay.runner.ray_engine import RayPlace
    from assay.settings import Settings

    place = RayPlace.of(Settings())  # what a run without RAY_ADDRESS would start
    context = ray.init(num_cpus=place.num_cpus, include_dashboard=False, object_store_memory=place.object_store_bytes,
                       logging_level=logging.WARNING, log_to_driver=False)
    try:
        print(f"address={context.address_info['gcs_address']}", flush=True)
        sys.stdin.read()
    finally:
        ray.shutdown()


if __name__ == "__main__":
    _hold()
