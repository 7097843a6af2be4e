"""The API fuzzed from its own OpenAPI document with schemathesis: whatever the generated
input (valid or not, authenticated), no answer is a 5xx. Bounded: a few examples per
operation, so the whole test stays within seconds."""

from __future__ import annotations

import os
import tempfile

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from assay.settings import Settings


def _app():
    from service_support import seed_users

    from assay.server import create_app

    folder = tempfile.mkdtemp(prefix="assay-fuzz-")
    url = f"sqlite:///{os.path.join(folder, 'assay.db')}"
    tokens = seed_users(url)  # migrates too: the ASGI transport may not run the app's lifespan
    app = create_app(Settings(database_url=url, code_timeout_max_ms=2000))
    return app, tokens["root"]


APP, TOKEN = _app()
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@pytest.fixture(scope="module", autouse=True)
def _close_service():
    yield
    APP.state.service.close()


@schema.parametrize()
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_input_makes_the_server_fail(case):
    response = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
    if case.path == "/ready" and response.status_code == 503:
        # the ASGI transport runs no lifespan, so no grading thread started: /ready says so
        assert "cannot grade now" in response.text and response.headers.get("retry-after"), response.text
        return
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {response.text}"
