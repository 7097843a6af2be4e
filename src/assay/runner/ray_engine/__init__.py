"""The Ray engine: the same suites graded on Ray Data, on a local Ray or on a cluster.

``assay run --engine ray`` (``pip install 'assay[ray]'``). The dataset is read in blocks on the
workers, graded in batches of hundreds to thousands of rows per task (by the columnar path
when every grader has a kernel, else by the object path), and the results lines stream back
to the driver, which appends them to the same results file the local engine writes. The
verdicts are the local engine's, line for line; only their order and ``latency_ms`` differ.

``RAY_ADDRESS`` (with ``RAY_AUTH_TOKEN`` for a cluster that requires a token) runs it on a
cluster; without it a local Ray is started for the run and stopped after it.
"""

from assay.runner.ray_engine._cluster import RayPlace, ray_session, require_ray
from assay.runner.ray_engine._driver import LineSink, RayRun, batch_rows, grade_on_ray
from assay.runner.ray_engine._source import Source, SuiteRef, open_suite
from assay.runner.ray_engine._specs import SpecsRef
from assay.runner.ray_engine._summary import PartialSummary
from assay.runner.ray_engine._worker import GradingActor

__all__ = ["GradingActor", "LineSink", "PartialSummary", "RayPlace", "RayRun", "Source", "SpecsRef", "SuiteRef",
           "batch_rows", "grade_on_ray", "open_suite", "ray_session", "require_ray"]
