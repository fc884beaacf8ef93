"""The folder cache of immutable answers: a second read sends nothing, a stale one revalidates by ETag,
live answers are never kept, and the folder stays under its limit."""

from __future__ import annotations

import tempfile

from tests.harness import LONG_SLUG, ServerTest, client, seen_count, seen_since


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class CacheTest(ServerTest):
    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        self.clock = FakeClock()

    def test_a_second_read_sends_no_request_and_a_stale_one_revalidates_by_etag(self) -> None:
        c = client(cache_dir=self.folder.name, clock=self.clock)
        before = seen_count()
        first = c.snapshots_page(LONG_SLUG, limit=500, include_orderbook=True)
        self.assertEqual(seen_count() - before, 1)
        second = c.snapshots_page(LONG_SLUG, limit=500, include_orderbook=True)
        self.assertEqual(second, first)
        self.assertEqual(seen_count() - before, 1, "served from the folder: no request")
        other = client(cache_dir=self.folder.name, clock=self.clock)
        self.assertEqual(other.snapshots_page(LONG_SLUG, limit=500, include_orderbook=True), first)
        self.assertEqual(seen_count() - before, 1, "another client over the same folder: no request")

        self.clock.now += 86_401  # past the answer's max-age
        third = c.snapshots_page(LONG_SLUG, limit=500, include_orderbook=True)
        self.assertEqual(third, first)
        revalidation = seen_since(before + 1)
        self.assertEqual(len(revalidation), 1)
        self.assertTrue(revalidation[0]["headers"]["if-none-match"].startswith('"'))
        c.snapshots_page(LONG_SLUG, limit=500, include_orderbook=True)
        self.assertEqual(seen_count() - before, 2, "a 304 makes the answer fresh again")

    def test_answers_without_an_etag_are_not_kept(self) -> None:
        c = client(cache_dir=self.folder.name, clock=self.clock)
        before = seen_count()
        c.account()
        c.account()
        c.markets_page(limit=1)
        c.markets_page(limit=1)
        self.assertEqual(seen_count() - before, 4)
        self.assertEqual(c.cache.size(), 0)

    def test_the_folder_stays_under_its_limit_dropping_the_least_recently_used(self) -> None:
        c = client(cache_dir=self.folder.name, clock=self.clock)
        c.snapshots_page(LONG_SLUG, limit=300, offset=0)
        page_bytes = c.cache.size()
        self.assertGreater(page_bytes, 10_000)
        c.cache.clear()
        small = client(cache_dir=self.folder.name, clock=self.clock, cache_max_bytes=int(page_bytes * 2.5))
        for offset in (0, 300, 600):
            small.snapshots_page(LONG_SLUG, limit=300, offset=offset)
        self.assertLessEqual(small.cache.size(), int(page_bytes * 2.5))
        before = seen_count()
        small.snapshots_page(LONG_SLUG, limit=300, offset=600)
        self.assertEqual(seen_count(), before, "the newest page is kept")
        small.snapshots_page(LONG_SLUG, limit=300, offset=0)
        self.assertEqual(seen_count() - before, 1, "the oldest page was dropped")

    def test_iterators_read_through_the_cache(self) -> None:
        c = client(cache_dir=self.folder.name, clock=self.clock)
        first = c.snapshots(LONG_SLUG, limit=1000).to_pandas()
        before = seen_count()
        again = c.snapshots(LONG_SLUG, limit=1000).to_pandas()
        self.assertEqual(seen_count(), before)
        self.assertTrue(first.equals(again))
