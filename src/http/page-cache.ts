import type { StoredMarket } from "../store/ports/market-store.ts";
import { compress, type Encoding } from "./compression.ts";

/** A rendered response body, the validator that names it, and its compressed forms as made. */
export interface CachedPage {
  body: Buffer;
  etag: string;
  /**
   * The body in each encoding asked for so far, compressed once each: a promise while it runs, the
   * bytes once made (what a direct answer can send without waiting, cached-page-answers.ts).
   */
  encoded?: Partial<Record<Encoding, Buffer | Promise<Buffer>>>;
  /** Bytes the cache counts for this page: the body and every finished encoding. */
  bytes?: number;
}

/** How long a client may keep a resolved market's page: it never changes (only a new version's key). */
export const PAGE_CACHE_CONTROL = "private, max-age=86400";

/** Keys remembered as asked for once (admits()); past this many the memory starts over. */
const SEEN_MAX = 1 << 16;

/**
 * Request URLs remembered with the page they name (rememberRequest()): past this many, all forgotten;
 * longer ones never remembered. Many spellings of one URL name the same page (parameters in another
 * order, `offset=000…0`), so what a client can make the server remember is bounded by these two:
 * at most 8 MiB of URLs, whatever it sends.
 */
const REQUESTS_MAX = 1 << 13;
const REQUEST_URL_MAX = 1024;

/**
 * What a request URL of the snapshot route was found to name once Fastify had routed, checked and
 * parsed it: the market as asked in the path, and the page's query as it enters the cache key.
 */
export interface PageRequest {
  slug: string;
  query: string;
  /**
   * The cache key last made for it and the market record it was made of: MarketAccess hands out the
   * same record for a second, and a key made again would be a new string to hash on every lookup.
   */
  keyOf?: { market: StoredMarket; key: string };
}

/** pageKey() of the request's query and `market`, made once per market record. */
export function pageKeyOf(request: PageRequest, market: StoredMarket): string {
  if (request.keyOf?.market !== market) request.keyOf = { market, key: pageKey(market, request.query) };
  return request.keyOf.key;
}

/**
 * The cache key of a resolved market's page: the exact version of the market (its updated_at and
 * snapshot count) and the page's query as the snapshot route writes it.
 */
export function pageKey(market: StoredMarket, query: string): string {
  return `${market.key}:${market.updatedAt}:${market.snapshotCount}:${query}`;
}

/**
 * Rendered pages of resolved markets, least recently used first out, bounded by total bytes: the
 * JSON and the compressed bytes kept beside it (compression.ts) alike. Resolved markets never change,
 * and each key names the market version (its updated_at and snapshot count), so an entry is never
 * stale: it is only ever evicted.
 */
export class PageCache {
  private readonly entries = new Map<string, CachedPage>();
  private bytes = 0;
  private readonly maxBytes: number;
  /** Hashes of keys asked for once and not kept (admits()). */
  private readonly seen = new Set<number>();
  /** Request URLs that named a page served from the cache (cached-page-answers.ts). */
  private readonly requests = new Map<string, PageRequest>();
  /** The entry last inserted or moved to the back: the most recently used. */
  private newest: CachedPage | undefined;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /**
   * Whether a page not in the cache should be kept now: from its second request. A page read once,
   * as a scan through history reads every page, would only push out pages that are read again, and
   * keeping it costs a copy of its bytes (the route sends a first request from a lent buffer,
   * body-buffers.ts). The first request is remembered by a hash of the key among the last SEEN_MAX
   * keys; a hash shared by two keys only admits a page one request early.
   */
  admits(key: string): boolean {
    if (this.maxBytes === 0) return false;
    const h = keyHash(key);
    if (this.seen.delete(h)) return true;
    if (this.seen.size >= SEEN_MAX) this.seen.clear();
    this.seen.add(h);
    return false;
  }

  get(key: string): CachedPage | undefined {
    const page = this.entries.get(key);
    if (page && page !== this.newest) {
      // Re-inserting moves the entry to the back of Map's insertion order: most recently used. Not for
      // the newest already: a delete and a set each time fill the Map's table with holes to rehash.
      this.entries.delete(key);
      this.entries.set(key, page);
      this.newest = page;
    }
    return page;
  }

  set(key: string, page: CachedPage): void {
    if (page.body.length > this.maxBytes / 4) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.bytes ?? old.body.length;
      this.entries.delete(key);
    }
    page.bytes = page.body.length;
    this.entries.set(key, page);
    this.newest = page;
    this.bytes += page.bytes;
    this.evict();
  }

  /**
   * The page's body in `encoding`, compressed on first use and kept with the page (counted in the
   * budget from then on); concurrent first requests share the one compression.
   */
  encoded(key: string, page: CachedPage, encoding: Encoding): Buffer | Promise<Buffer> {
    const encodings = (page.encoded ??= {});
    let pending = encodings[encoding];
    if (!pending) {
      const made = compress(page.body, encoding);
      encodings[encoding] = made;
      pending = made;
      made.then(
        (bytes) => {
          if (this.entries.get(key) !== page) return;
          encodings[encoding] = bytes;
          page.bytes = (page.bytes ?? page.body.length) + bytes.length;
          this.bytes += bytes.length;
          this.evict();
        },
        () => {
          // A failed compression is not kept: the next request tries again.
          if (encodings[encoding] === made) delete encodings[encoding];
        },
      );
    }
    return pending;
  }

  /**
   * Remembers that `url`, routed and checked by the server, named this page query of the market asked
   * as `slug`, so that the same URL can be answered again without routing it (cached-page-answers.ts).
   */
  rememberRequest(url: string, slug: string, query: string): void {
    if (this.maxBytes === 0 || url.length > REQUEST_URL_MAX || this.requests.has(url)) return;
    if (this.requests.size >= REQUESTS_MAX) this.requests.clear();
    this.requests.set(url, { slug, query });
  }

  /** The page's bytes in `encoding` if they have been made (encoded()), else undefined. */
  static madeIn(page: CachedPage, encoding: Encoding): Buffer | undefined {
    const made = page.encoded?.[encoding];
    return made instanceof Buffer ? made : undefined;
  }

  requestOf(url: string): PageRequest | undefined {
    return this.requests.get(url);
  }

  private evict(): void {
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.bytes ?? v.body.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }
}

/** FNV-1a over the key's UTF-16 code units, as a small integer (a Set of them stores no objects). */
function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 1;
}
