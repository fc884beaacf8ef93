/** A rendered response body and the validator that names it. */
export interface CachedPage {
  body: Buffer;
  etag: string;
}

/**
 * Rendered pages of resolved markets, least recently used first out, bounded by total bytes. Resolved
 * markets never change, and each key names the market version (its updated_at and snapshot count), so
 * an entry is never stale: it is only ever evicted.
 */
export class PageCache {
  private readonly entries = new Map<string, CachedPage>();
  private bytes = 0;
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get(key: string): CachedPage | undefined {
    const page = this.entries.get(key);
    if (page) {
      // Re-inserting moves the entry to the back of Map's insertion order: most recently used.
      this.entries.delete(key);
      this.entries.set(key, page);
    }
    return page;
  }

  set(key: string, page: CachedPage): void {
    if (page.body.length > this.maxBytes / 4) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.body.length;
      this.entries.delete(key);
    }
    this.entries.set(key, page);
    this.bytes += page.body.length;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.body.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }
}
