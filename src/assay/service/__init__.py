"""The engine of ``assay serve``, below its HTTP edge (``assay.server``) and free of any web
framework: no FastAPI or Starlette import, no request or response type. What the service does
beyond translating one request lives here, and the routes and pages call it:

- the run queue: ``worker`` (slot threads claim slices and renew their leases), ``slices`` (grades a
  slice locally) and ``ray_slices`` (on a Ray cluster), ``ray_permits`` (a user's cap on code
  in flight across the cluster), ``run_summary`` (a run's summary and its comparison with another);
- sharing: ``fairness`` (users take the sandbox's slots in turn), ``pace`` (chunk sizes that
  grow with the speed seen), ``coalesce`` (one caller's concurrent code tests graded as one
  sandbox batch);
- ``grading`` (configs validated, stored rows compiled and kept, one sample graded), ``datasets`` and
  ``row_batches`` (uploads streamed into a dataset version), ``reaper`` (stalled uploads
  removed), ``failures`` (what a user may read about a failure, and what only the log holds);
- ``metrics`` (the process's Prometheus series) and ``telemetry`` (resources and the database
  pool wrapped to count into them).

The parts are put together once per process by ``assay.server.service.Service``.
"""
