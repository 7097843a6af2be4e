"""Judge client tests: a client pointed at the ``judge_server`` fixture (tests/conftest.py)."""

from __future__ import annotations

import pytest
from judge_testkit import KEY

from assay.judges import OpenAIJudgeClient


@pytest.fixture
def make_client(judge_server):
    """``make_client(**options)``: an OpenAIJudgeClient on the test server (fast backoff, model
    ``judge-test``, key ``KEY``), closed at teardown."""
    clients: list[OpenAIJudgeClient] = []

    def make(**options) -> OpenAIJudgeClient:
        options.setdefault("base_url", judge_server.url)
        options.setdefault("api_key", KEY)
        options.setdefault("model", "judge-test")
        options.setdefault("backoff_s", 0.01)
        client = OpenAIJudgeClient(**options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
