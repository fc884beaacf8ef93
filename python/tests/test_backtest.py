"""POSTs keep one Idempotency-Key across retries (charged once); the backtest helpers."""

from __future__ import annotations

import re

from tests.harness import RecordingSleep, ServerTest, client, control, new_key, seen_count, seen_since

UUID4 = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"


class IdempotencyTest(ServerTest):
    def test_a_post_retried_after_a_dropped_answer_is_charged_once(self) -> None:
        c = client(api_key=new_key("pro"), sleep=RecordingSleep())
        retries = []
        c._on_retry = retries.append
        control("/drop-next-post", {})
        before = seen_count()
        answer = c.generate_strategy({"preset": "momentum_entry"})
        sent = [r["headers"].get("idempotency-key") for r in seen_since(before)]
        self.assertEqual(len(sent), 2, "the POST whose answer was lost, and its retry")
        self.assertEqual(sent[0], sent[1], "the retry sent the same key")
        self.assertRegex(sent[0], UUID4)
        self.assertEqual([r.error.code for r in retries], ["NETWORK"])
        self.assertEqual(answer["quota"]["used"], 1, "charged once")
        self.assertEqual([s["id"] for s in c.strategies_page()["strategies"]], [answer["strategy"]["id"]])

        c.generate_strategy({"preset": "quick_scalp"}, idempotency_key="mine-1")
        last = seen_since(seen_count() - 1)[0]["headers"]
        self.assertEqual(last["idempotency-key"], "mine-1")
        self.assertEqual(last["content-type"], "application/json")
        c.generate_strategy({"preset": "dip_buying"})
        self.assertNotEqual(seen_since(seen_count() - 1)[0]["headers"]["idempotency-key"], sent[0])


class BacktestTest(ServerTest):
    def test_run_a_preset_and_a_definition_wait_and_get_frames(self) -> None:
        c = client(api_key=new_key("pro"), sleep=lambda _: None)
        done = c.backtest("btc", "5m", preset="momentum_entry", market_count=2)
        self.assertEqual(done.status, "complete")
        results = done.results.to_pandas()
        self.assertEqual(len(results), len(done.answer["results"]))
        self.assertEqual(str(results["start_time"].dtype), "datetime64[ns, UTC]")
        self.assertIn("trade_count", results.columns)
        self.assertNotIn("trades", results.columns)
        trades = done.trades.to_pandas()
        self.assertEqual(len(trades), sum(len(r["trades"]) for r in done.answer["results"]))
        self.assertEqual(list(trades.columns[:2]), ["slug", "entry_decision_time"])
        self.assertEqual(str(trades["entry_fill_time"].dtype), "datetime64[ns, UTC]")
        self.assertEqual(str(trades["closed_at"].dtype), "datetime64[ns, UTC]")
        self.assertEqual(len(done.equity()), len((done.aggregate or {}).get("equity_curve") or []))

        definition = done.run["definition"]
        queued = c.backtest("btc", "5m", definition=definition, market_count=2, wait=0)
        self.assertEqual(queued.status, "complete", "a run answered queued is waited for")
        self.assertEqual(queued.answer, c.backtest_run(queued.run["id"]))
        self.assertEqual(list(c.backtest_results(queued.run["id"])), queued.answer["results"])
        with self.assertRaises(ValueError):
            c.backtest("btc", "5m", preset="quick_scalp", definition=definition)
        self.assertTrue(re.match(r".+", queued.run["id"]))
