-- wrk script of bench/service.py: POSTs ASSAY_BENCH_BODY (JSON) with the bearer token in
-- ASSAY_BENCH_TOKEN (none when empty), and prints one line of JSON when the run ends:
-- requests, duration and latency percentiles in microseconds, and every kind of error.
wrk.method = "POST"
wrk.body = os.getenv("ASSAY_BENCH_BODY") or "{}"
wrk.headers["Content-Type"] = "application/json"
local token = os.getenv("ASSAY_BENCH_TOKEN") or ""
if token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'ASSAY_BENCH {"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "max_us": %d, '
      .. '"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
