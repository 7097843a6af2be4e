"""``ASSAY_USER_CODE_CAP`` on Ray: one user's code evaluations in flight over the cluster,
whatever runs and actors they come from, counted from stamps taken inside the sandboxes of the
Ray workers; another user's one-sample run is graded while the big runs go on; a permit whose
holder stops renewing it ends with its lease."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "service"))
from in_flight import STAMPED, peak, stamps  # noqa: E402
from service_support import make_api  # noqa: E402

from assay.store import Database  # noqa: E402
from assay.store.users import user_id  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + 240  # a bound against hanging, not a measure
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """A server grading on a local Ray, started here for the module's tests."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
    apps = make_api(f"sqlite:///{tmp_path_factory.mktemp('ray-fair') / 'assay.db'}", None, run_engine="ray",
                    run_slice_size=4, user_code_cap=1, run_slots=3, queue_poll_ms=50)
    try:
        yield next(apps)
    finally:
        apps.close()
        ray.shutdown()


def test_a_users_code_on_ray_stays_within_the_cap_and_another_user_is_not_starved(api):
    def run_of(user: str, rows: list[dict]) -> str:
        code = api.call("POST", "/evaluators", user, json={"name": "stamped", "type": "code", "config": {
            "language": "python", "code": STAMPED}}).json()["data"]["id"]
        task = api.call("POST", "/tasks", user, json={"name": "t", "evaluators": [{"evaluatorId": code}],
                                                      "dataset": {"rows": rows}}).json()["data"]["id"]
        return api.call("POST", f"/tasks/{task}/runs", user).json()["data"]["id"]

    def run(run_id: str, user: str = "alice") -> dict:
        return api.call("GET", f"/runs/{run_id}", user).json()["data"]

    # Two runs of alice's, so two actors (one per run) whose sandboxes have a worker per core.
    big = [run_of("alice", [{"id": f"{r}{i}", "output": "x", "expected": "x", "metadata": {"pause": 0.2}}
                            for i in range(16)]) for r in "ab"]
    # A slot for each of alice's runs and one for bob's: bob's run waits for no slice of alice's,
    # so what could hold it back is her code in flight on the cluster (not her turn in the queue).
    wait_for(lambda: all(run(r)["status"] == "running" for r in big), "alice's runs start")
    small = run_of("bob", [{"id": "b", "output": "y", "expected": "y", "metadata": {"pause": 0.2}}])
    # The cluster's permits per user, as /metrics reports them while alice's code runs.
    database = Database(api.database_url)
    with database.session() as session:
        alice_id = user_id(session, "alice")
    database.dispose()
    gauge = f'assay_ray_evaluations_in_flight{{user="{alice_id}"}} '
    wait_for(lambda: gauge in api.client.get("/metrics").text, "alice's permits on /metrics")
    held = [line for line in api.client.get("/metrics").text.splitlines() if line.startswith(gauge)]
    assert all(float(line.split()[-1]) <= 1 for line in held), held
    wait_for(lambda: all(run(r, u)["status"] == "completed" for r, u in ((big[0], "alice"), (big[1], "alice"),
                                                                         (small, "bob"))), "the runs complete")

    def details(run_id: str, user: str) -> list[dict]:
        items = api.call("GET", f"/runs/{run_id}/results", user, params={"limit": 100}).json()["data"]["items"]
        assert all(r["passed"] for r in items), items
        return [r["details"] for r in items]

    alice = stamps(d for r in big for d in details(r, "alice"))
    bob = stamps(details(small, "bob"))
    assert len(alice) == 32 and len(bob) == 1
    assert peak(alice) == 1, sorted(alice)  # the cap, over both of alice's actors
    assert bob[0][0] < max(ended for _, ended in alice)  # bob's run did not wait for alice's to end


def test_a_permit_whose_holder_stops_renewing_ends_with_its_lease(api):
    import ray

    from assay.service.ray_permits import ClusterGate, permits_actor

    book = permits_actor()
    gate = ClusterGate(slots=2, per_user=1, lease_s=1.0)
    gate._call("take", "carol", 1, 1, 1.0)  # a holder that dies holding it: never renewed nor given back
    assert ray.get(book.in_flight.remote()).get("carol") == 1
    with gate.slot("carol"):  # waits for the lease to end, then holds the only permit
        assert ray.get(book.in_flight.remote()).get("carol") == 1
    wait_for(lambda: "carol" not in ray.get(book.in_flight.remote()), "the permit is given back")
    wait_for(lambda: not ray.get(book.in_flight.remote()), "every run's permits are given back")
