"""Iterators against the server: every item exactly once, in the API's order, one request per page."""

from __future__ import annotations

import math

from tests.harness import LONG_SLUG, ServerTest, client, new_key, seen_count, seen_since
from updown import UpdownError


class PagingTest(ServerTest):
    def setUp(self) -> None:
        self.client = client()

    def test_a_long_market_pages_every_snapshot_exactly_once(self) -> None:
        total = self.client.snapshots_page(LONG_SLUG, limit=1)["total"]
        self.assertEqual(total, 3600)
        ascending = [s["time"] for s in self.client.snapshots(LONG_SLUG, order="asc", limit=1000)]
        self.assertEqual(ascending, sorted(ascending))
        for limit in (700, None):
            before = seen_count()
            times = [s["time"] for s in self.client.snapshots(LONG_SLUG, limit=limit)]
            self.assertEqual(len(times), total)
            self.assertEqual(len(set(times)), total, "no snapshot twice")
            self.assertEqual(times, ascending[::-1], "newest first, as the API pages them")
            pages = math.ceil(total / (limit or 1000))
            self.assertEqual(seen_count() - before, pages, f"{pages} requests of {limit or 1000}")

    def test_a_starting_offset_and_a_range_are_kept_across_pages(self) -> None:
        times = [s["time"] for s in self.client.snapshots(LONG_SLUG, order="asc", limit=1000)]
        from_offset = [s["time"] for s in self.client.snapshots(LONG_SLUG, order="asc", limit=500, offset=1234)]
        self.assertEqual(from_offset, times[1234:])
        before = seen_count()
        ranged = self.client.snapshots(LONG_SLUG, order="asc", limit=250, start_time=times[100], end_time=times[1099])
        self.assertEqual([s["time"] for s in ranged], times[100:1100])
        self.assertEqual(seen_count() - before, 4, "1000 in pages of 250: four requests, no empty fifth")
        self.assertEqual(ranged.total, 1000)

    def test_markets_page_and_leaving_the_loop_fetches_nothing_more(self) -> None:
        everything = [m["slug"] for m in self.client.markets_page(limit=100)["markets"]]
        self.assertEqual([m["slug"] for m in self.client.markets(limit=3)], everything)
        before = seen_count()
        for market in self.client.markets(limit=2):
            self.assertTrue(market["slug"])
            break
        self.assertEqual(seen_count() - before, 1)
        before = seen_count()
        pages = self.client.markets(coin="eth")
        self.assertEqual(seen_count(), before, "nothing is fetched before the iteration starts")
        self.assertTrue(all(m["coin"] == "eth" for m in pages))

    def test_trades_strategies_and_exchange_series(self) -> None:
        slug, most = "", 0
        for market in self.client.markets():
            total = self.client.trades_page(market["slug"], limit=1)["total"]
            if total > most:
                slug, most = market["slug"], total
        self.assertGreater(most, 20)
        self.assertEqual(list(self.client.trades(slug, limit=7)), self.client.trades_page(slug, limit=1000)["trades"])
        lists = [
            (self.client.depth_snapshots("btc", "spot", limit=400), "time"),
            (self.client.candles("btc", "futures", limit=17), "open_time"),
            (self.client.candles("btc", "futures", interval="5m", limit=5), "open_time"),
            (self.client.funding_rates("btc", limit=2), "time"),
            (self.client.open_interest("btc", limit=3), "time"),
            (self.client.mark_prices("btc", limit=500, order="asc"), "time"),
        ]
        for pages, key in lists:
            items = list(pages)
            self.assertGreater(pages.total, 1)
            self.assertEqual(len(items), pages.total)
            self.assertEqual(len({i[key] for i in items}), pages.total, "each once")
        own = client(api_key=new_key("pro"))
        for preset in ("momentum_entry", "quick_scalp", "dip_buying"):
            own.generate_strategy({"preset": preset})
        strategies = list(own.strategies(limit=2))
        self.assertEqual(len(strategies), 3)
        self.assertEqual(own.strategy(strategies[0]["id"]), strategies[0])

    def test_events_book_and_replay_of_a_market_without_events(self) -> None:
        page = self.client.events_page(LONG_SLUG, order="asc")
        self.assertEqual((page["slug"], page["events"], page["total"]), (LONG_SLUG, [], 0))
        self.assertEqual(list(self.client.events(LONG_SLUG)), [])
        with self.assertRaises(UpdownError) as caught:
            self.client.book_at(LONG_SLUG, "2026-07-23T22:30:00Z")
        self.assertEqual(caught.exception.code, "RESOURCE_NOT_FOUND")
        self.assertEqual(self.client.replay([LONG_SLUG], "2026-07-23T22:00:00Z", "2026-07-23T23:00:00Z"), [])
        url = self.client.replay_url("2026-07-23T22:00:00Z", "2026-07-23T23:00:00Z", speed=10)
        self.assertTrue(url.startswith("ws://"), url)
        self.assertIn("/v1/replay/ws?from=2026-07-23T22%3A00%3A00Z&to=", url)

    def test_single_answers_and_the_key_in_a_header(self) -> None:
        before = seen_count()
        market = self.client.market(LONG_SLUG)
        self.assertEqual(market["slug"], LONG_SLUG)
        request = seen_since(before)[0]
        self.assertEqual(request["headers"]["x-api-key"], self.client.api_key)
        self.assertNotIn(self.client.api_key, request["url"])
        self.assertEqual(self.client.coverage(LONG_SLUG)["slug"], LONG_SLUG) if "slug" in self.client.coverage(LONG_SLUG) else None
        first = self.client.snapshots_page(LONG_SLUG, order="asc", limit=1)["snapshots"][0]
        at = self.client.snapshot_at(LONG_SLUG, first["time"], include_orderbook=True)
        self.assertEqual(at["snapshot"]["time"], first["time"])
        self.assertEqual(at["snapshot"]["orderbook_up"]["bids"][0], {"price": 0.49, "size": 10})
        price = self.client.execution_price(LONG_SLUG, outcome="up", side="buy", size=5, time=first["time"])
        self.assertGreater(price["average_price"], 0)
        self.assertLessEqual(len(self.client.market_series(LONG_SLUG, points=50)["snapshots"]), 50)
        self.assertTrue(self.client.series_catalog()["series"])
        self.assertEqual(self.client.account()["plan"], "enterprise")
        self.assertIn("used", self.client.backtest_quota())
        self.assertIn("properties", self.client.strategy_schema())
        self.assertEqual(self.client.latest("btc", "spot")["symbol"], "BTCUSDT")
        self.assertLessEqual(len(self.client.latest_trades("btc", "futures", limit=5)["data"]), 5)
        self.assertEqual(self.client.health()["status"], "ok")
        self.assertIn("status", self.client.readiness())
        self.assertIn("# TYPE", self.client.metrics())
        ndjson = self.client.export_snapshots(LONG_SLUG, format="ndjson")
        self.assertEqual(len([line for line in ndjson.splitlines() if line.strip()]) >= 3600, True)
