"""Where a Ray run executes: the cluster ``RAY_ADDRESS`` names, or a small local Ray.

Ray reads its own variables: ``RAY_ADDRESS`` (``ray://host:10001`` or ``host:6379``) picks the
cluster, and ``RAY_AUTH_MODE=token`` with ``RAY_AUTH_TOKEN`` (or ``RAY_AUTH_TOKEN_PATH``)
authenticates to one started with token authentication. assay passes them through untouched,
so pointing a run at a cluster needs no change of code or flag.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from assay.core.errors import AssayError
from assay.runner.sizing import cores
from assay.settings import Settings

LOCAL_OBJECT_STORE_BYTES = 512 * 1024 * 1024
"""The local Ray's shared-memory object store: enough for a few blocks in flight per worker;
Ray Data's back-pressure keeps the stream within it, so the run's memory stays flat."""


@dataclass(frozen=True, slots=True)
class RayPlace:
    """How to reach Ray: ``address`` None starts a local Ray with ``num_cpus`` CPUs."""

    address: str | None = None
    num_cpus: int | None = None
    object_store_bytes: int = LOCAL_OBJECT_STORE_BYTES

    @classmethod
    def of(cls, settings: Settings, *, num_cpus: int | None = None) -> RayPlace:
        """The settings' ``RAY_ADDRESS`` when set, else a local Ray on this machine's cores (or ``num_cpus``)."""
        address = settings.ray_address
        return cls(address=address, num_cpus=None if address else (num_cpus or cores()))

    def describe(self) -> str:
        """In words, for messages."""
        if self.address:
            return f"the Ray cluster at {self.address} (RAY_ADDRESS)"
        return f"a local Ray with {self.num_cpus} CPUs (RAY_ADDRESS is not set)"


def require_ray() -> None:
    """Raise an AssayError saying how to install Ray when it is missing."""
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError:
        raise AssayError("--engine ray needs Ray Data: pip install 'assay[ray]'") from None


@contextmanager
def ray_session(place: RayPlace) -> Iterator[None]:
    """Connect to Ray (or start a local one) for the length of the block, then shut it down.

    A Ray already initialised by the caller (a notebook, a test fixture) is used as it is and
    left running: whoever started it stops it.
    """
    require_ray()
    import ray

    if ray.is_initialized():
        yield
        return
    try:
        if place.address:
            ray.init(address=place.address, logging_level=logging.WARNING, log_to_driver=False)
        else:
            ray.init(num_cpus=place.num_cpus, include_dashboard=False, object_store_memory=place.object_store_bytes,
                     logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise AssayError(f"cannot start or reach {place.describe()}: {exc}") from None
    try:
        yield
    finally:
        ray.shutdown()
