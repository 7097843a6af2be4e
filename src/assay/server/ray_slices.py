"""Slices of service runs graded on Ray (``ASSAY_RUN_ENGINE=ray``), by the workers of
``assay run --engine ray`` (``runner.ray_engine.GradingActor``).

The server connects to Ray once (Ray's own ``RAY_ADDRESS``; a local Ray on this machine when
it is unset) and keeps one ``GradingActor`` actor per run it grades: the actor compiles the
run's evaluator snapshot once (``SpecsRef``) and keeps its sandbox pool warm. A slice goes to
it as one batch of JSON lines; its verdicts come back as results lines, which this module
turns into result rows for the database (inserted by the slice, in one batch), reason codes
and arguments included.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import orjson

from assay.core.sample import Sample
from assay.settings import Settings

log = logging.getLogger("assay.server.ray")
ACTORS_KEPT = 4
"""Runs whose actor a server keeps at once; the oldest is let go first."""


class RayGrading:
    """Grades a slice's samples with a run's evaluators on Ray."""

    def __init__(self, settings: Settings) -> None:
        from assay.runner.ray_engine import RayPlace, require_ray

        require_ray()
        import ray

        self.settings = settings
        self._started = False
        if not ray.is_initialized():
            place = RayPlace.from_env(settings.environ)
            if place.address:
                ray.init(address=place.address, logging_level=logging.WARNING, log_to_driver=False)
            else:
                ray.init(num_cpus=place.num_cpus, include_dashboard=False, logging_level=logging.WARNING,
                         log_to_driver=False, object_store_memory=place.object_store_bytes)
            self._started = True
        from assay.runner.ray_engine import GradingActor

        self._actor_class = ray.remote(GradingActor).options(num_cpus=1)
        self._actors: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def grade(self, run_id: str, specs: Sequence[dict[str, Any]], samples: Sequence[Sample]) -> list[dict[str, Any]]:
        """The verdicts of ``samples`` (as results lines read back: ``id`` and ``results``, each
        result named by its evaluator id)."""
        import pyarrow as pa
        import ray

        actor = self._actor(run_id, specs)
        text = [orjson.dumps(sample.model_dump(mode="json", exclude_none=True)).decode() for sample in samples]
        reply = ray.get(actor.__call__.remote(pa.table({"text": text})))
        lines = b"".join(reply["lines"])
        return [orjson.loads(line) for line in lines.splitlines() if line.strip()]

    def _actor(self, run_id: str, specs: Sequence[dict[str, Any]]) -> Any:
        import ray

        from assay.runner.ray_engine import SpecsRef

        with self._lock:
            actor = self._actors.get(run_id)
            if actor is None:
                ref = SpecsRef(tuple((s["evaluatorId"], s["type"], s["config"], float(s["weight"])) for s in specs),
                               self.settings.code_timeout_max_ms, self.settings.api_judge_base_urls,
                               self.settings.api_judge_key_envs)
                actor = self._actor_class.remote(  # lines with reason codes: stored as the local path stores them
                    ref, self.settings, fingerprint=None, concurrency=self.settings.run_concurrency, codes=True)
                self._actors[run_id] = actor
                while len(self._actors) > ACTORS_KEPT:
                    ray.kill(self._actors.popitem(last=False)[1])
            self._actors.move_to_end(run_id)
            return actor

    def close(self) -> None:
        import ray

        with self._lock:
            for actor in self._actors.values():
                ray.kill(actor)
            self._actors.clear()
        if self._started:
            ray.shutdown()
