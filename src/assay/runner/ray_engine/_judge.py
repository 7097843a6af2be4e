"""LLM judges on Ray: one async actor holds the run's judge client for every worker.

A worker building its own client would multiply the judge concurrency by the number of
workers (and open as many caches). Instead the driver starts one ``JudgeActor`` per run when
the suite has LLM graders: its client's single concurrency limit (``ASSAY_JUDGE_CONCURRENCY``)
bounds the calls in flight across the whole cluster, and its one cache serves every worker.
Workers reach it through ``ActorJudgeClient``, the ``JudgeClient`` their graders see.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.core.judge import JudgeReply, JudgeRequest
from assay.runner.suites import Suite
from assay.settings import Settings

ACTOR_BATCHES = 64
"""Workers' batches the actor serves at once (each waits on the client's one limit)."""


class JudgeActor:
    """The run's judge client, as an async Ray actor (``ray.remote(JudgeActor)``)."""

    def __init__(self, settings: Settings, read_cache: bool) -> None:
        from assay.judges import OpenAIJudgeClient

        self._client = OpenAIJudgeClient.from_settings(settings, read_cache=read_cache)
        self._threads = ThreadPoolExecutor(ACTOR_BATCHES, thread_name_prefix="assay-judge-actor")

    async def judge_many(self, requests: list[JudgeRequest]) -> list[JudgeReply]:
        # The client's judge_many blocks until its own event loop has the replies: a thread per
        # batch keeps this actor's loop free for the other workers' batches.
        return await asyncio.get_running_loop().run_in_executor(self._threads, self._client.judge_many, requests)

    async def close(self) -> None:
        self._threads.shutdown(wait=True)
        self._client.close()


class ActorJudgeClient:
    """A worker's ``JudgeClient``: every request goes to the run's ``JudgeActor``."""

    def __init__(self, actor: Any) -> None:
        self._actor = actor

    def judge(self, request: JudgeRequest) -> JudgeReply:
        return self.judge_many([request])[0]

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        import ray

        return ray.get(self._actor.judge_many.remote(list(requests)))

    def close(self) -> None:
        """Nothing to close here: the driver stops the actor after the run."""


def uses_judges(suite: Suite) -> bool:
    """Whether a grader of ``suite`` may call an LLM judge (a composite counts if a child does)."""
    return any(spec.traits.judge for spec in suite.all_graders())


def start_judge_actor(settings: Settings, read_cache: bool) -> Any:
    """The run's ``JudgeActor``: no CPU of its own (it waits on the network), many calls at once."""
    import ray

    # ray.remote(**options) is typed without max_concurrency; ActorClass.options takes every option
    remote = ray.remote(JudgeActor).options(num_cpus=0, max_concurrency=ACTOR_BATCHES)
    return remote.remote(settings, read_cache)


def stop_judge_actor(actor: Any) -> None:
    """Close the client (its cache is flushed) and end the actor."""
    import ray

    try:
        ray.get(actor.close.remote(), timeout=30)
    finally:
        ray.kill(actor)
