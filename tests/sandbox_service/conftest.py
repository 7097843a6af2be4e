"""Fixtures of the sandbox service tests: one real service process for the session (tests that
stop or choke a service start their own), and a client on it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from service_process import SECRET, SandboxService  # noqa: E402

from assay.sandbox.remote import RemoteCodeRunner  # noqa: E402


@pytest.fixture(scope="session")
def service() -> Iterator[SandboxService]:
    with SandboxService(args=("--workers", "2", "--max-body-bytes", "65536", "--max-code-bytes", "4096")) as svc:
        yield svc


@pytest.fixture(scope="session")
def remote(service: SandboxService) -> Iterator[RemoteCodeRunner]:
    with RemoteCodeRunner(service.url, SECRET) as runner:
        yield runner
