"""Time to load a 24h market's snapshots with books into a DataFrame: the client against the same
pages fetched with a plain urllib loop (run by bench/python-client.ts, which serves the market).

Both ask for the same pages (include_orderbook=true, order=asc, limit=1000), parse them with json and
end with a DataFrame whose `time` column is datetime64[ns, UTC]: the client's `.to_pandas()` (books
nested), the loop's `pd.DataFrame(rows)` plus `pd.to_datetime`. Each is run once to warm the server's
page cache, then RUNS times alternately; the medians are compared. The client runs twice: with gzip
(its default) and without (as the plain loop asks). Wall time includes the server's; the CPU time
of this process alone is what the client itself costs."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import urllib.request

import pandas as pd

from updown import Client

BASE = os.environ["UPDOWN_BASE_URL"]
KEY = os.environ["UPDOWN_API_KEY"]
SLUG = os.environ["UPDOWN_BENCH_SLUG"]
RUNS = int(os.environ.get("BENCH_RUNS", "5"))


def plain() -> pd.DataFrame:
    rows: list = []
    offset = 0
    while True:
        url = f"{BASE}/v1/markets/{SLUG}/snapshots?include_orderbook=true&order=asc&limit=1000&offset={offset}"
        with urllib.request.urlopen(urllib.request.Request(url, headers={"X-API-Key": KEY})) as answer:
            page = json.loads(answer.read())
        rows.extend(page["snapshots"])
        offset += len(page["snapshots"])
        if not page["snapshots"] or offset >= page["total"]:
            break
    frame = pd.DataFrame(rows)
    frame["time"] = pd.to_datetime(frame["time"], utc=True)
    return frame


def with_client(compress: bool):
    def load() -> pd.DataFrame:
        return Client(compress=compress).snapshots(SLUG, include_orderbook=True, order="asc", limit=1000).to_pandas()

    return load


def main() -> int:
    loaders = {"plain urllib loop": plain, "client (gzip)": with_client(True), "client (identity)": with_client(False)}
    rows = {}
    for name, load in loaders.items():
        frame = load()  # warm-up: the server keeps a page from its second request
        rows[name] = len(frame)
        print(f"warmed: {name}, {len(frame)} rows, columns {list(frame.columns)}", flush=True)
    times = {name: [] for name in loaders}
    cpu = {name: [] for name in loaders}
    for _ in range(RUNS):
        for name, load in loaders.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            load()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
            print(f"{name}: {times[name][-1]:.3f} s, {cpu[name][-1]:.3f} s of this process's CPU", flush=True)
    base = statistics.median(times["plain urllib loop"])
    base_cpu = statistics.median(cpu["plain urllib loop"])
    result = {}
    for name, samples in times.items():
        median = statistics.median(samples)
        median_cpu = statistics.median(cpu[name])
        result[name] = {
            "rows": rows[name],
            "median_s": round(median, 3),
            "ratio": round(median / base, 3),
            "median_cpu_s": round(median_cpu, 3),
            "cpu_ratio": round(median_cpu / base_cpu, 3),
        }
        print(
            f"{name:20s} {rows[name]} rows  median {median:.3f} s ({median / base:.2f}x the plain loop), "
            f"client-side CPU {median_cpu:.3f} s ({median_cpu / base_cpu:.2f}x)"
        )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
