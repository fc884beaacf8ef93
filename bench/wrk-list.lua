-- wrk script of `npm run bench` (bench/wrk.ts): a rotation list of paths, one a line, from a file.
-- Arguments: the file and the number of paths sent by earlier runs (skipped). Every path is sent at
-- most once: when the list runs out, the thread stops instead of sending one again. Prints the run's
-- summary, with the paths sent (issued) and any request made after the list ran out, as one JSON line.
local threads = {}
local paths = {}
local cursor = 1
issued = 0
exhausted = 0

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local file, skip = args[1], tonumber(args[2] or "0")
  local n = 0
  for line in io.lines(file) do
    n = n + 1
    if n > skip and line ~= "" then paths[#paths + 1] = line end
  end
end

function request()
  if cursor > #paths then
    exhausted = exhausted + 1
    wrk.thread:stop()
    return wrk.format("GET", "/bench-list-exhausted")
  end
  local path = paths[cursor]
  cursor = cursor + 1
  issued = issued + 1
  return wrk.format("GET", path)
end

function done(summary, latency, requests)
  local sent, over = 0, 0
  for _, t in ipairs(threads) do
    sent = sent + t:get("issued")
    over = over + t:get("exhausted")
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_SUMMARY {"requests":%d,"durationUs":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"p50Us":%d,"p99Us":%d,"issued":%d,"exhausted":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), sent, over))
end
