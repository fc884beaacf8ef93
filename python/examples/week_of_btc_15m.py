"""A week of BTC 15-minute markets in one DataFrame, and the Up price around the price to beat.

    UPDOWN_API_KEY=... python3 examples/week_of_btc_15m.py [--days 7] [--plot up_vs_distance.png]

Takes the resolved BTC 15m markets that started in the `--days` days before the newest one, loads
every snapshot of each (oldest first) into one DataFrame with the market's slug, winner and price to
beat (the coin price at its start), and summarises how the Up price follows the coin's distance to the
price to beat. With matplotlib installed, `--plot FILE` draws Up price against that distance; without
it the script says so and goes on. Resolved pages are cached in ~/.cache/updown (or --cache).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

import pandas as pd

from updown import Client


def load_week(client: Client, days: float) -> pd.DataFrame:
    newest = client.markets_page(coin="btc", market_type="15m", resolved=True, limit=1)["markets"]
    if not newest:
        raise SystemExit("no resolved BTC 15m market recorded yet")
    end = pd.Timestamp(newest[0]["start_time"])
    start = end - pd.Timedelta(days=days)
    frames = []
    for market in client.markets(coin="btc", market_type="15m", resolved=True, start_time=start.isoformat(), end_time=end.isoformat()):
        frame = client.snapshots(market["slug"], order="asc").to_pandas()
        frame.insert(0, "slug", market["slug"])
        frame["market_start"] = pd.Timestamp(market["start_time"])
        frame["price_to_beat"] = market["coin_price_start"]
        frame["winner"] = market["winner"]
        frames.append(frame)
    if not frames:
        raise SystemExit("no market in that week")
    week = pd.concat(frames, ignore_index=True)
    week["distance"] = week["coin_price"] - week["price_to_beat"]
    week["elapsed_s"] = (week["time"] - week["market_start"]).dt.total_seconds()
    return week


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=float, default=7.0)
    parser.add_argument("--plot", type=Path, help="write a PNG of Up price against the distance to the price to beat")
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "updown")
    args = parser.parse_args()

    client = Client(cache_dir=args.cache)
    week = load_week(client, args.days)
    markets = week["slug"].nunique()
    print(f"{len(week)} snapshots of {markets} markets, {week['time'].min()} to {week['time'].max()}")

    # How the Up price follows the coin's distance to the price to beat, in buckets of that distance.
    buckets = pd.qcut(week["distance"], q=min(5, week["distance"].nunique()), duplicates="drop")
    summary = week.groupby(buckets, observed=True)["price_up"].agg(["count", "mean"])
    print(summary.to_string())
    up_won = week.groupby("slug")["winner"].first().eq("Up").mean()
    print(f"Up won {up_won:.0%} of the markets")

    if args.plot is not None:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no plot (pip install matplotlib)", file=sys.stderr)
        else:
            fig, ax = plt.subplots(figsize=(9, 5))
            ax.scatter(week["distance"], week["price_up"], s=2, c=week["elapsed_s"], cmap="viridis")
            ax.axvline(0, color="grey", linewidth=0.8)
            ax.set_xlabel("coin price - price to beat (USD)")
            ax.set_ylabel("Up price")
            ax.set_title(f"BTC 15m, {markets} markets")
            fig.savefig(args.plot, dpi=120)
            print(f"plot written to {args.plot}")
    print("done at", dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
