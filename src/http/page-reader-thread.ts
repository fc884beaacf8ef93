import { parentPort, workerData } from "node:worker_threads";
import { backendOf } from "../store/backends.ts";
import { JsonBytes } from "../wire/json-bytes.ts";
import { BodyBuffers } from "./body-buffers.ts";
import { readSnapshotPage, type PageAsk, type PageMarket } from "./snapshot-page.ts";
import { renderRunAnswer, type ResultsPage } from "../backtest/wire.ts";
import type { RunRecord, StrategyRecord } from "../store/ports/backtest-store.ts";

/**
 * A page reader thread (page-readers.ts starts them): its own connection to the store the server
 * opened, reading and writing pages of resolved markets and run answers while the request thread goes
 * on with other requests. Messages in: a read, with the buffers of earlier pages sent back
 * (transferred) to write pages into again. Out: `ready` once the store is open (`unopened` instead
 * when it cannot be opened), then per read `page` (the page's buffer, transferred, and its length) or
 * `failed`.
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
  /** Reads what is asked; what it gives writes it whole into w, synchronously, so reads may interleave. */
  const reading = async (read: PageRead): Promise<(w: JsonBytes) => void> => {
    if (read.kind === "snapshots") return readSnapshotPage(store.markets, read.market, read.ask);
    const { run, strategy, page } = read;
    const results = await store.backtests.listResults(run.id, page.limit, page.offset);
    const { json } = renderRunAnswer(run, strategy, results, page);
    return (w) => w.utf8(json);
  };
  const answer = async (m: ReadMessage): Promise<void> => {
    const write = await reading(m.read);
    w.reset();
    write(w);
    const { body } = buffers.lend(w);
    const buffer = body.buffer as ArrayBuffer;
    post({ type: "page", id: m.id, body: buffer, length: body.length }, [buffer]);
  };
  port.on("message", (m: ReadMessage) => {
    for (const b of m.returned) buffers.giveBack(Buffer.from(b));
    // A read that fails, in the store or in writing, is the request thread's to read again.
    answer(m).catch((err: unknown) =>
      post({ type: "failed", id: m.id, message: String((err as Error)?.message ?? err) }),
    );
  });
  port.once("close", () => void store.close());
  post({ type: "ready" });
} catch (err) {
  post({ type: "unopened", message: String((err as Error)?.message ?? err) });
}
