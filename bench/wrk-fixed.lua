-- wrk script of `npm run bench` (bench/wrk.ts): one fixed path; prints the run's summary as one JSON line.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local function summary_line(summary, latency, issued, exhausted)
  local e = summary.errors
  return string.format(
    'WRK_SUMMARY {"requests":%d,"durationUs":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"p50Us":%d,"p99Us":%d,"issued":%d,"exhausted":%d}',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), issued, exhausted)
end

function done(summary, latency, requests)
  io.write(summary_line(summary, latency, summary.requests, 0) .. "\n")
end
