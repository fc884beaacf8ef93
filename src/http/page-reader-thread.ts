import { parentPort, workerData } from "node:worker_threads";
import { backendOf } from "../store/backends.ts";
import { JsonBytes } from "../wire/json-bytes.ts";
import { BodyBuffers } from "./body-buffers.ts";
import { readSnapshotPage, type PageAsk, type PageMarket } from "./snapshot-page.ts";
import { renderRunAnswer, type ResultsPage } from "../backtest/wire.ts";
import type { RunRecord, StrategyRecord } from "../store/ports/backtest-store.ts";
import type { Store } from "../store/ports/store.ts";

/**
 * A page reader thread (page-readers.ts starts them): its own connection to the store the server
 * opened, reading and writing pages of resolved markets and run answers while the request thread goes
 * on with other requests. Messages in: a read, with the buffers of earlier pages sent back (transferred) to write
 * pages into again. Out: `ready` once the store is open, then per read `page` (the page's buffer,
 * transferred, and its length) or `failed`; `unopened` instead of `ready` when the store cannot be opened.
 */

/** What a thread reads: a page of a market's snapshots, or a run's answer with a page of its results. */
export type PageRead =
  | { kind: "snapshots"; market: PageMarket; ask: PageAsk }
  | { kind: "run"; run: RunRecord; strategy: StrategyRecord | null; page: ResultsPage };

export interface ReadMessage {
  id: number;
  read: PageRead;
  /** Buffers of pages this thread sent, which the server has finished sending. */
  returned: ArrayBuffer[];
}

export type ReaderMessage =
  | { type: "ready" }
  | { type: "page"; id: number; body: ArrayBuffer; length: number }
  | { type: "failed"; id: number; message: string }
  | { type: "unopened"; message: string };

const port = parentPort;
if (port === null) throw new Error("http/page-reader-thread.ts runs as a worker thread");
const { databaseUrl } = workerData as { databaseUrl: string };
const post = (m: ReaderMessage, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

try {
  const backend = backendOf(databaseUrl);
  if (backend === null) throw new Error(`no backend opens ${databaseUrl.split(":")[0]}:`);
  // The server migrated the store before it started this thread: opened as it is.
  const store = await backend.open(databaseUrl, {});
  const w = new JsonBytes(1 << 20);
  // Pages are written into w and its buffer sent as it is (no copy): w continues in a free buffer.
  const buffers = new BodyBuffers();
  /** Reads what is asked; the result writes it whole into w (once w is free: reads may interleave). */
  const written = async (store: Store, read: PageRead): Promise<(w: JsonBytes) => void> => {
    if (read.kind === "snapshots") return readSnapshotPage(store.markets, read.market, read.ask);
    const { run, strategy, page } = read;
    const results = await store.backtests.listResults(run.id, page.limit, page.offset);
    const { json } = renderRunAnswer(run, strategy, results, page);
    return (w) => w.utf8(json);
  };
  port.on("message", (m: ReadMessage) => {
    for (const b of m.returned) buffers.giveBack(Buffer.from(b));
    written(store, m.read).then(
      (page) => {
        w.reset();
        page(w);
        const { body } = buffers.lend(w);
        post({ type: "page", id: m.id, body: body.buffer as ArrayBuffer, length: body.length }, [
          body.buffer as ArrayBuffer,
        ]);
      },
      (err: unknown) => post({ type: "failed", id: m.id, message: String((err as Error)?.message ?? err) }),
    );
  });
  port.once("close", () => void store.close());
  post({ type: "ready" });
} catch (err) {
  post({ type: "unopened", message: String((err as Error)?.message ?? err) });
}
