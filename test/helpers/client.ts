import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { LimitDecision, RateLimiter, RateWindow } from "../../src/access/limiter/limiter.ts";
import { MemoryLimiter } from "../../src/access/limiter/memory.ts";
import { makeTestApp, type TestApp, type TestAppOptions } from "./app.ts";

/** A request as the server received it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface ServedApp {
  t: TestApp;
  baseUrl: string;
  /** Every /v1 request the server received, in order (seen by the HTTP server itself). */
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** A test app listening on a loopback port, for clients that speak real HTTP to it. */
export async function serveTestApp(options: TestAppOptions = {}): Promise<ServedApp> {
  const t = await makeTestApp(options);
  const seen: SeenRequest[] = [];
  t.app.server.on("request", (req: { method?: string; url?: string; headers: IncomingHttpHeaders }) => {
    if (req.url?.startsWith("/v1"))
      seen.push({ method: req.method ?? "", url: req.url, headers: req.headers });
  });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = t.app.server.address() as AddressInfo;
  const close = () => {
    // Connections of requests the client gave up on (timeouts) would hold the close for fetch's keep-alive.
    t.app.server.closeAllConnections();
    return t.close();
  };
  return { t, baseUrl: `http://127.0.0.1:${port}`, seen, close };
}

/**
 * The app's own in-memory limiter, which a test can break (as an unreachable backing service: 503,
 * or a plain failure: 500) or hold (every request waits in it until released: a slow answer).
 */
export class ControlledLimiter implements RateLimiter {
  readonly kind = "memory" as const;
  readonly degraded = false;
  readonly #inner = new MemoryLimiter();
  /** null: works; "ECONNREFUSED": fails as unreachable (503); "plain": fails as a bug (500). */
  failure: "ECONNREFUSED" | "plain" | null = null;
  #held: Promise<void> | null = null;
  #onEnter: (() => void) | null = null;

  /** Holds every request from now on; `entered` settles when one arrives, `release` lets all go. */
  hold(): { entered: Promise<void>; release: () => void } {
    let release = () => {};
    this.#held = new Promise<void>((resolve) => (release = resolve));
    const entered = new Promise<void>((resolve) => (this.#onEnter = resolve));
    return {
      entered,
      release: () => {
        this.#held = null;
        release();
      },
    };
  }

  async #gate(): Promise<void> {
    if (this.failure !== null) {
      throw Object.assign(
        new Error("limiter failed"),
        this.failure === "plain" ? {} : { code: this.failure },
      );
    }
    if (this.#held !== null) {
      this.#onEnter?.();
      await this.#held;
    }
  }

  async limit(
    subject: string,
    windows: readonly RateWindow[],
    cost: number,
    nowMs: number,
  ): Promise<LimitDecision> {
    await this.#gate();
    return this.#inner.limit(subject, windows, cost, nowMs);
  }

  async peek(subject: string, windows: readonly RateWindow[], nowMs: number): Promise<LimitDecision> {
    await this.#gate();
    return this.#inner.peek(subject, windows, nowMs);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** A port nothing listens on (a just-closed listener's), for network failures. */
export async function closedPort(): Promise<number> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
