"""``assay serve``'s process freezes what start-up made out of the collector's reach (a full
collection of it paused every thread 100-140 ms, the slowest answers of ``POST /v1/traces``);
an app made in a process of many apps, as here, does not."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from assay.server import create_app
from assay.settings import Settings

SERVER_PROCESS = """
import gc, sys
from fastapi.testclient import TestClient
from assay.server.app import app_from_env
with TestClient(app_from_env()):
    frozen = gc.get_freeze_count()
    objects = len(gc.get_objects())
print(frozen, objects)
"""


def test_the_servers_own_process_freezes_its_start_up_heap(tmp_path: Path) -> None:
    env = {**os.environ, "ASSAY_DATABASE_URL": f"sqlite:///{tmp_path}/assay.db", "ASSAY_JUDGE_CACHE": "off"}
    out = subprocess.run([sys.executable, "-c", SERVER_PROCESS], env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    frozen, left = int(out[0]), int(out[1])
    assert frozen > 50_000, out  # the modules, models and routes of start-up
    assert left < frozen / 4, out  # what a full collection still walks is a fraction of it


def test_an_app_in_a_process_of_many_apps_freezes_nothing(tmp_path: Path) -> None:
    before = gc.get_freeze_count()
    with TestClient(create_app(Settings.from_env({"ASSAY_DATABASE_URL": f"sqlite:///{tmp_path}/assay.db",
                                                  "ASSAY_JUDGE_CACHE": "off"}))):
        pass
    assert gc.get_freeze_count() == before
