"""POSTs keep one Idempotency-Key across retries (charged once); the backtest helpers."""

from __future__ import annotations

import json
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

    def test_a_runs_results_and_trades_by_page_and_a_polyhistorical_replay(self) -> None:
        c = client(api_key=new_key("pro"), sleep=lambda _: None)
        done = c.backtest("btc", "5m", preset="momentum_entry", market_count=3)
        run_id = done.run["id"]
        first = c.backtest_run(run_id, results_limit=1, results_offset=1)
        self.assertEqual(first["results_page"], {"total": len(done.answer["results"]), "limit": 1, "offset": 1})
        self.assertEqual(first["results"], done.answer["results"][1:2])
        for result in done.answer["results"]:
            trades = list(c.run_trades(run_id, result["slug"], limit=1))
            self.assertEqual(trades, result["trades"], result["slug"])
        some = next(r for r in done.answer["results"] if r["trades"])
        self.assertEqual(len(c.run_trades(run_id, some["slug"]).to_pandas()), len(some["trades"]))

        slug = done.answer["results"][0]["slug"]
        replay = c.replay_strategy(
            {
                "marketSlug": slug,
                "side": "UP",
                "entryConditions": [{"field": "price_up", "operator": "<", "value": 0.9}],
                "exitConditions": [],
                "positionSize": 10,
            }
        )
        self.assertTrue(replay["success"])
        self.assertEqual(replay["data"]["market"]["slug"], slug)
        self.assertIsInstance(replay["data"]["trades"], list)

    def test_a_runs_files_its_definition_and_runs_side_by_side(self) -> None:
        c = client(api_key=new_key("pro"), sleep=lambda _: None)
        done = c.backtest("btc", "5m", preset="momentum_entry", market_count=2)
        run_id = done.run["id"]
        trades = [(r["slug"], t) for r in done.answer["results"] for t in r["trades"]]
        ndjson = c.export_run_trades(run_id, format="ndjson")
        assert ndjson is not None
        lines = [json.loads(line) for line in ndjson.decode().splitlines()]
        self.assertEqual(lines, [{"slug": slug, **t} for slug, t in trades])
        csv = c.export_run_trades(run_id)
        assert csv is not None
        self.assertEqual(len(csv.decode().splitlines()), len(trades) + 1)
        results = c.export_run_results(run_id, format="parquet")
        assert results is not None
        self.assertEqual(results[:4], b"PAR1")
        self.assertEqual(c.run_definition(run_id), done.run["definition"])
        other = c.backtest("btc", "5m", definition=done.run["definition"], market_count=2, seed=7)
        side = c.compare_runs([other.run["id"], run_id])
        self.assertEqual([r["run"]["id"] for r in side["runs"]], [other.run["id"], run_id])
        self.assertEqual(side["runs"][0]["intervals"]["seed"], 7)
        self.assertEqual([b["name"] for b in side["runs"][1]["benchmarks"]], ["always_up", "always_down", "favourite", "random"])
