"""Slices of service runs graded on Ray (``ASSAY_RUN_ENGINE=ray``), by the workers of
``assay run --engine ray`` (``runner.ray_engine.GradingActor``).

The server connects to Ray once (Ray's own ``RAY_ADDRESS``; a local Ray on this machine when
it is unset) and keeps one ``GradingActor`` actor per run it grades: the actor compiles the
run's evaluator snapshot once (``SpecsRef``) and keeps its sandbox pool warm. A slice goes to
it as one batch of JSON lines; its verdicts come back as results lines, which this module
turns into result rows for the database (inserted by the slice, in one batch), reason codes
and arguments included. The actor's code runs under the run's user's permits from the cluster's
book (``ray_permits``): at most ``ASSAY_USER_CODE_CAP`` of one user's code evaluations in flight
on the whole cluster.

A server's stop kills its actors at once (``halt``), and with them the evaluations in flight in
their sandboxes (whose processes end with their actor): what they were grading is not stored,
the slices go back to the queue, and the next server grades them again. The permits a killed
actor held are given back to the cluster's book at once (``CodePermits.drop``), or end with their
lease when the book cannot be reached (a local Ray this server started ends with it, book and all).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from functools import partial
from typing import Any

import orjson

from assay.core.sample import Sample
from assay.service.ray_permits import capped_on_cluster, permits_actor
from assay.settings import Settings
from assay.store.snapshot import RunEvaluator

log = logging.getLogger("assay.server.ray")
ACTORS_KEPT = 4
"""Runs whose actor a server keeps at once; the oldest is let go first."""
METRICS_WAIT_S = 2.0
"""How long a scrape of ``/metrics`` waits for the cluster's book of permits."""


class RayGrading:
    """Grades a slice's samples with a run's evaluators on Ray."""

    def __init__(self, settings: Settings) -> None:
        from assay.runner.ray_engine import RayPlace, require_ray

        require_ray()
        import ray

        self.settings = settings
        self._started = False
        if not ray.is_initialized():
            place = RayPlace.of(settings)
            if place.address:
                ray.init(address=place.address, logging_level=logging.WARNING, log_to_driver=False)
            else:
                ray.init(num_cpus=place.num_cpus, include_dashboard=False, logging_level=logging.WARNING,
                         log_to_driver=False, object_store_memory=place.object_store_bytes)
            self._started = True
        from assay.runner.ray_engine import GradingActor

        # No CPU held for an actor's life: a server keeps the actors of up to ACTORS_KEPT runs,
        # mostly idle, and each holding a CPU would leave a small cluster none for another user's
        # run (it would wait for runs to be let go). What runs at once is bounded by the servers'
        # slots and the users' code permits; SPREAD puts the actors on every node.
        self._actor_class = ray.remote(GradingActor).options(num_cpus=0, scheduling_strategy="SPREAD")
        self._actors: OrderedDict[str, tuple[Any, str]] = OrderedDict()
        """Run id -> its actor and the name its permits are held under."""
        self._lock = threading.Lock()
        self._halted = False

    def grade(self, run_id: str, user_id: str, specs: Sequence[RunEvaluator], samples: Sequence[Sample],
              only: frozenset[str] | None = None) -> list[dict[str, Any]] | None:
        """The verdicts of ``samples`` by the evaluators of ``specs`` (or those of them whose ids
        are in ``only``), as results lines read back: ``id`` and ``results``, each result named
        by its evaluator id, graded for ``user_id``'s run ``run_id``. None once the server
        stops (``halt``): the actor was killed with them."""
        import pyarrow as pa
        import ray

        actor = self._actor(run_id, user_id, specs)
        if actor is None:
            return None
        text = [orjson.dumps(sample.model_dump(mode="json", exclude_none=True)).decode() for sample in samples]
        try:
            reply = ray.get(actor.__call__.remote(pa.table({"text": text}), only))
        except Exception:
            if self._halted:  # the actor killed, or Ray going away, by the stop
                return None
            raise
        lines = b"".join(reply["lines"])
        return [orjson.loads(line) for line in lines.splitlines() if line.strip()]

    def _actor(self, run_id: str, user_id: str, specs: Sequence[RunEvaluator]) -> Any:
        """The run's actor (started on first use; None once the server stops)."""
        from assay.runner.ray_engine import SpecsRef

        evicted: list[tuple[Any, str]] = []
        with self._lock:
            if self._halted:
                return None
            if run_id not in self._actors:
                ref = SpecsRef(tuple((s.evaluator_id, s.type, s.config, s.weight) for s in specs),
                               self.settings.code_timeout_max_ms, self.settings.api_judge_base_urls,
                               self.settings.api_judge_key_envs)
                # The run's code takes the user's permits from the cluster's book (``ray_permits``),
                # under a name of its own, so that they can be given back if it is killed.
                holder = f"{run_id}:{uuid.uuid4().hex[:12]}"
                capped = partial(capped_on_cluster, user=user_id, cap=self.settings.user_code_cap,
                                 lease_s=float(self.settings.run_lease_s), holder=holder)
                actor = self._actor_class.remote(  # lines with reason codes: stored as the local path stores them
                    ref, self.settings, fingerprint=None, concurrency=self.settings.run_concurrency, codes=True,
                    wrap_code=capped)
                self._actors[run_id] = (actor, holder)
                while len(self._actors) > ACTORS_KEPT:
                    evicted.append(self._actors.popitem(last=False)[1])
            self._actors.move_to_end(run_id)
            actor = self._actors[run_id][0]
        self._kill(evicted)
        return actor

    def in_flight(self) -> dict[str, int]:
        """Code evaluations in flight on the cluster per user (its book of permits)."""
        import ray

        found: dict[str, int] = ray.get(permits_actor().in_flight.remote(), timeout=METRICS_WAIT_S)
        return found

    def halt(self) -> None:
        """The server stops: kill its actors now, with the evaluations in flight in them (a
        ``grade`` waiting for one returns None), and start none after."""
        with self._lock:
            self._halted = True
            actors = list(self._actors.values())
            self._actors.clear()
        self._kill(actors)

    def _kill(self, actors: list[tuple[Any, str]]) -> None:
        """Kill run actors and give the permits they held back to the cluster's book."""
        if not actors:
            return
        import ray

        for actor, _ in actors:
            ray.kill(actor)
        if self._started:  # this server's own Ray, and its book, end with it (started from a slot
            return  # thread, its processes may be gone already: a call to the book would hang)
        try:
            ray.get(permits_actor().drop.remote([holder for _, holder in actors]), timeout=METRICS_WAIT_S)
        except Exception:  # noqa: BLE001 - the book is away: the permits end with their lease
            log.warning("giving the code permits of %d killed run actor(s) back failed", len(actors), exc_info=True)

    def close(self) -> None:
        import ray

        self.halt()
        if self._started:
            ray.shutdown()
