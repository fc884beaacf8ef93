"""to_pandas(): the documented columns and dtypes, and as many rows as the list's total."""

from __future__ import annotations

import pandas as pd

from tests.harness import LONG_SLUG, ServerTest, client

UTC_TIME = "datetime64[ns, UTC]"


class FrameTest(ServerTest):
    def setUp(self) -> None:
        self.client = client()

    def test_snapshots_with_nested_books(self) -> None:
        pages = self.client.snapshots(LONG_SLUG, include_orderbook=True, order="asc")
        frame = pages.to_pandas()
        self.assertEqual(len(frame), pages.total)
        self.assertEqual(len(frame), 3600)
        self.assertEqual(
            list(frame.columns),
            ["time", "coin_price", "price_up", "price_down", "up_bids", "up_asks", "down_bids", "down_asks"],
        )
        self.assertEqual(str(frame["time"].dtype), UTC_TIME)
        for column in ("coin_price", "price_up", "price_down"):
            self.assertEqual(str(frame[column].dtype), "float64")
        first = frame.iloc[0]
        self.assertEqual(first["time"].microsecond, 250_000, "microseconds kept")
        self.assertEqual(str(first["time"].tz), "UTC")
        self.assertEqual(first["up_bids"][0], {"price": 0.49, "size": 10})
        self.assertEqual(len(first["up_asks"]), 10)
        self.assertTrue(frame["time"].is_monotonic_increasing)

    def test_snapshots_with_flat_books_and_without(self) -> None:
        pages = self.client.snapshots(LONG_SLUG, include_orderbook=True, order="asc", limit=900)
        flat = pages.to_pandas(books="flat", levels=3)
        self.assertEqual(len(flat), pages.total)
        expected = ["time", "coin_price", "price_up", "price_down"]
        for outcome in ("up", "down"):
            for side in ("bid", "ask"):
                for level in (1, 2, 3):
                    expected += [f"{outcome}_{side}_price_{level}", f"{outcome}_{side}_size_{level}"]
        self.assertEqual(list(flat.columns), expected)
        self.assertTrue(all(str(flat[c].dtype) == "float64" for c in expected[1:]))
        self.assertEqual(flat["up_bid_price_1"].iloc[0], 0.49)
        self.assertEqual(flat["up_ask_price_3"].iloc[0], 0.53)
        self.assertEqual(int(flat["up_bid_price_1"].notna().sum()), 360, "books where they were recorded")
        bare = self.client.snapshots(LONG_SLUG).to_pandas()
        self.assertEqual(list(bare.columns), ["time", "coin_price", "price_up", "price_down"])
        self.assertEqual(len(bare), 3600)
        self.assertEqual(list(self.client.snapshots(LONG_SLUG, include_orderbook=True, limit=5).to_pandas(books="none").columns), expected[:4])

    def test_markets_trades_and_exchange_series(self) -> None:
        pages = self.client.markets(limit=4)
        markets = pages.to_pandas()
        self.assertEqual(len(markets), pages.total)
        for column in ("start_time", "end_time", "resolved_at", "created_at", "updated_at"):
            self.assertEqual(str(markets[column].dtype), UTC_TIME, column)
        self.assertEqual(list(markets.columns[:3]), ["slug", "winner", "market_id"])
        self.assertIn("settlement_source", markets.columns)
        self.assertIn("fee_schedule_rate", markets.columns)
        self.assertEqual(str(markets["coin_price_start"].dtype), "float64")
        slug = max(self.client.markets(), key=lambda m: self.client.trades_page(m["slug"], limit=1)["total"])["slug"]
        trades = self.client.trades(slug, limit=50)
        frame = trades.to_pandas()
        self.assertEqual(len(frame), trades.total)
        self.assertEqual(str(frame["time"].dtype), UTC_TIME)
        for pages, time_column in (
            (self.client.candles("btc", "spot", limit=500), "open_time"),
            (self.client.depth_snapshots("btc", "futures", limit=1000), "time"),
            (self.client.funding_rates("btc"), "time"),
            (self.client.open_interest("btc"), "time"),
            (self.client.mark_prices("btc"), "time"),
        ):
            frame = pages.to_pandas()
            self.assertEqual(len(frame), pages.total)
            self.assertEqual(str(frame[time_column].dtype), UTC_TIME)
        empty = self.client.markets(coin="btc", start_time="2001-01-01T00:00:00Z", end_time="2001-01-02T00:00:00Z").to_pandas()
        self.assertEqual(len(empty), 0)
        self.assertIn("slug", empty.columns)
        self.assertIsInstance(empty, pd.DataFrame)
