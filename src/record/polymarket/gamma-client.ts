import { type GammaMarket, parseGammaMarket, requireObject } from "../../upstream/gamma-market.ts";

/**
 * Look-ups of one market by slug on Polymarket's Gamma API. Both `/markets?slug=` and
 * `/events?slug=` are asked, in that order, because either can come back empty for a market the
 * other knows (a market listed before its event is, or the reverse).
 */

export class UpstreamError extends Error {
  readonly status: number | null;
  constructor(message: string, status: number | null = null) {
    super(message);
    this.name = "UpstreamError";
    this.status = status;
  }
}

export interface GammaClientOptions {
  baseUrl: string;
  timeoutMs?: number;
  /** Aborted when the process stops waiting for upstream calls: every call in flight or to come fails. */
  signal?: AbortSignal;
}

export class GammaClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly signal: AbortSignal | null;

  constructor(opts: GammaClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.signal = opts.signal ?? null;
  }

  /** The market with this upstream slug, or null when Gamma does not list it (yet). */
  async marketBySlug(slug: string): Promise<GammaMarket | null> {
    const markets = await this.getList(`/markets?slug=${encodeURIComponent(slug)}`);
    const direct = markets.find((m) => requireObject(m, "market").slug === slug);
    if (direct) return parseGammaMarket(direct as Record<string, unknown>);
    const events = await this.getList(`/events?slug=${encodeURIComponent(slug)}`);
    for (const e of events) {
      const event = requireObject(e, "event");
      const nested = Array.isArray(event.markets) ? event.markets : [];
      // These events hold one market; it carries the event's slug, or the event's id links it.
      const market = (nested as unknown[]).map((m) => requireObject(m, "market"))[0];
      if (market) return parseGammaMarket({ ...market, events: [{ id: event.id }] });
    }
    return null;
  }

  private async getList(path: string): Promise<unknown[]> {
    let response: Response;
    try {
      const timeout = AbortSignal.timeout(this.timeoutMs);
      const signal = this.signal ? AbortSignal.any([timeout, this.signal]) : timeout;
      response = await fetch(`${this.baseUrl}${path}`, { signal });
    } catch (err) {
      throw new UpstreamError(`GET ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!response.ok) throw new UpstreamError(`GET ${path}: HTTP ${response.status}`, response.status);
    const body: unknown = await response.json().catch(() => {
      throw new UpstreamError(`GET ${path}: the answer is not JSON`);
    });
    if (!Array.isArray(body)) throw new UpstreamError(`GET ${path}: expected a list`);
    return body;
  }
}
