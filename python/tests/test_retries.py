"""Retries, typed errors and timeouts against the server. Waits go through the injected sleep, which
records them (and for a 429 advances the app's clock by as much): no test waits for real time."""

from __future__ import annotations

from updown import UpdownError
from updown.client import retry_after_seconds

from tests.harness import LONG_SLUG, RecordingSleep, ServerTest, client, control, new_key, seen_count, seen_since


class RetryTest(ServerTest):
    def test_a_429_with_retry_after_is_waited_out_and_retried(self) -> None:
        key = new_key("enterprise", per_minute_limit=1)
        sleep = RecordingSleep(lambda seconds: control("/advance", {"seconds": seconds}))
        retries = []
        c = client(api_key=key, sleep=sleep, on_retry=retries.append)
        c.market(LONG_SLUG)
        second_of_minute = (control("/now")["now_us"] // 1_000_000) % 60
        before = seen_count()
        self.assertEqual(c.market(LONG_SLUG)["slug"], LONG_SLUG)
        self.assertEqual(sleep.slept, [60 - second_of_minute], "the wait is the server's Retry-After")
        self.assertEqual(len(retries), 1)
        self.assertEqual(retries[0].error.status, 429)
        self.assertEqual(retries[0].error.code, "RATE_LIMIT_EXCEEDED")
        self.assertEqual(retries[0].error.retry_after, 60 - second_of_minute)
        self.assertEqual(seen_count() - before, 2, "the refused request and its retry")

    def test_a_retry_after_beyond_retry_max_fails_at_once(self) -> None:
        key = new_key("enterprise", per_day_limit=1)
        sleep = RecordingSleep()
        c = client(api_key=key, sleep=sleep)
        c.market(LONG_SLUG)
        err = self.assertRaisesUpdown(c.market, LONG_SLUG)
        self.assertEqual((err.code, err.status), ("RATE_LIMIT_EXCEEDED", 429))
        self.assertTrue(err.is_rate_limited)
        self.assertEqual(err.details["window"], "day")
        self.assertGreater(err.retry_after, 30)
        self.assertEqual(sleep.slept, [])

    def test_a_503_is_retried_after_its_retry_after(self) -> None:
        control("/limiter", {"failure": "ECONNREFUSED"})
        try:
            sleep = RecordingSleep(lambda _: control("/limiter", {"failure": None}))
            before = seen_count()
            self.assertEqual(client(sleep=sleep).market(LONG_SLUG)["slug"], LONG_SLUG)
            self.assertEqual(sleep.slept, [5.0], "Retry-After: 5")
            self.assertEqual(seen_count() - before, 2)
        finally:
            control("/limiter", {"failure": None})

    def test_a_lasting_503_ends_after_max_retries(self) -> None:
        control("/limiter", {"failure": "ECONNREFUSED"})
        try:
            sleep = RecordingSleep()
            before = seen_count()
            err = self.assertRaisesUpdown(client(sleep=sleep, max_retries=3).market, LONG_SLUG)
            self.assertEqual((err.code, err.status, err.retry_after), ("SERVICE_UNAVAILABLE", 503, 5.0))
            self.assertEqual(sleep.slept, [5.0, 5.0, 5.0])
            self.assertEqual(seen_count() - before, 4)
        finally:
            control("/limiter", {"failure": None})

    def test_a_500_backs_off_exponentially_with_full_jitter_capped(self) -> None:
        control("/limiter", {"failure": "plain"})
        try:
            half = RecordingSleep()
            c = client(sleep=half, random=lambda: 0.5, retry_base=0.1, max_retries=4)
            self.assertEqual(self.assertRaisesUpdown(c.market, LONG_SLUG).code, "INTERNAL_ERROR")
            self.assertEqual([round(s, 6) for s in half.slept], [0.05, 0.1, 0.2, 0.4])
            capped = RecordingSleep()
            c = client(sleep=capped, random=lambda: 0.999, retry_base=0.1, retry_max=0.15, max_retries=3)
            self.assertRaisesUpdown(c.market, LONG_SLUG)
            self.assertEqual([round(s, 6) for s in capped.slept], [0.0999, 0.14985, 0.14985])
        finally:
            control("/limiter", {"failure": None})

    def test_no_server_there_is_network_after_the_retries(self) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        sleep = RecordingSleep()
        retries = []
        err = self.assertRaisesUpdown(
            client(base_url=f"http://127.0.0.1:{port}", max_retries=2, sleep=sleep, on_retry=retries.append).account
        )
        self.assertEqual((err.code, err.status, err.request_id), ("NETWORK", None, None))
        self.assertEqual(len(sleep.slept), 2)
        self.assertTrue(all(r.error.code == "NETWORK" for r in retries))

    def test_an_attempt_that_outlasts_the_timeout_is_a_timeout_retried(self) -> None:
        control("/hold", {})
        try:
            sleep = RecordingSleep()
            retries = []
            c = client(timeout=0.3, max_retries=1, sleep=sleep, on_retry=retries.append)
            err = self.assertRaisesUpdown(c.market, LONG_SLUG)
            self.assertEqual((err.code, err.status), ("TIMEOUT", None))
            self.assertEqual([r.error.code for r in retries], ["TIMEOUT"])
        finally:
            control("/release", {})
        self.assertEqual(client().market(LONG_SLUG)["slug"], LONG_SLUG)

    def test_retry_after_is_seconds_or_an_http_date(self) -> None:
        import email.utils

        now = 1784852434.5
        self.assertEqual(retry_after_seconds("26", now), 26)
        self.assertEqual(retry_after_seconds(" 0 ", now), 0)
        self.assertEqual(retry_after_seconds(email.utils.formatdate(1784852460, usegmt=True), now), 25.5)
        self.assertEqual(retry_after_seconds("Fri, 24 Jul 2026 00:20:00 GMT", now), 0, "a date past is no wait")
        for odd in (None, "", "-5", "1.5", "soon"):
            self.assertIsNone(retry_after_seconds(odd, now), odd)


class ErrorTest(ServerTest):
    def check(self, call, status: int, code: str, *args) -> UpdownError:
        before = seen_count()
        err = self.assertRaisesUpdown(call, *args)
        self.assertIsInstance(err, UpdownError)
        self.assertEqual((err.status, err.code), (status, code))
        self.assertGreater(len(err.message), 10)
        self.assertRegex(err.request_id or "", r"^[0-9a-f-]{36}$")
        self.assertEqual(seen_count() - before, 1, "a 4xx is not retried")
        self.assertIn(code, str(err))
        return err

    def test_401_403_404_400_carry_code_message_details_and_request_id(self) -> None:
        pro = client()
        self.check(client(api_key="").account, 401, "UNAUTHORIZED")
        self.check(lambda: next(iter(client(api_key="ud_wrong").markets())), 401, "UNAUTHORIZED")
        starter = client(api_key=new_key("starter"))
        denied = self.check(starter.generate_strategy, 403, "BACKTEST_AI_REQUIRED", {"preset": "quick_scalp"})
        self.assertEqual(denied.details, {"required_plan": "pro"})
        self.check(pro.market, 404, "RESOURCE_NOT_FOUND", "btc-updown-5m-1")
        invalid = self.check(lambda: pro.markets_page(limit=0), 400, "VALIDATION_ERROR")
        self.assertEqual(invalid.details["parameter"], "limit")
        self.assertIsNone(invalid.retry_after)
        self.assertFalse(invalid.is_rate_limited)

    def test_the_callers_own_request_id_comes_back(self) -> None:
        err = self.assertRaisesUpdown(client().request, "GET", "/v1/markets/nope", headers={"X-Request-Id": "trace.42"})
        self.assertEqual(err.request_id, "trace.42")
        self.assertEqual(seen_since(seen_count() - 1)[0]["headers"]["x-request-id"], "trace.42")
