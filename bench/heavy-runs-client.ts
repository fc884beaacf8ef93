import { constants, setPriority } from "node:os";

/**
 * The heavy runs of the backtest bench (bench/backtest.ts), in a process of its own: `n` clients each
 * post a run (waiting up to 25 s for it), poll it lightly (one market's result) if it answered 202,
 * then read its whole answer, and post the next, until the parent says stop.
 *
 * From the parent: {type: "start", origin, key, n, body}, then {type: "stop"}. To the parent: {type:
 * "started"} once the clients run, then {completed, runMs, first} (or {error}) once they have stopped.
 */
interface Start {
  type: "start";
  origin: string;
  key: string;
  n: number;
  body: object;
}

/** What the clients did, sent to the parent once they have stopped. */
export interface HeavyRunsReport {
  completed: number;
  runMs: number[];
  /** The first run's trades and the bytes of its whole answer. */
  first: { trades: number; bytes: number } | null;
  error?: string;
}

let stopping = false;
let completed = 0;
const runMs: number[] = [];
let first: HeavyRunsReport["first"] = null;

async function client(origin: string, headers: Record<string, string>, body: object): Promise<void> {
  while (!stopping) {
    const t0 = performance.now();
    const posted = await fetch(`${origin}/v1/backtest-ai/run`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    if (posted.status === 429) {
      await posted.arrayBuffer();
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const answer = (await posted.json()) as { run?: { id: string; status: string } };
    if (answer.run === undefined) throw new Error(`the run was refused: ${JSON.stringify(answer)}`);
    let { status } = answer.run;
    while (status !== "complete" && status !== "failed") {
      await new Promise((r) => setTimeout(r, 250));
      const now = await fetch(`${origin}/v1/backtest-ai/runs/${answer.run.id}?results_limit=1`, { headers });
      status = ((await now.json()) as { run: { status: string } }).run.status;
    }
    const whole = await (await fetch(`${origin}/v1/backtest-ai/runs/${answer.run.id}`, { headers })).text();
    first ??= {
      trades: (JSON.parse(whole) as { aggregate: { trades: number } | null }).aggregate?.trades ?? 0,
      bytes: Buffer.byteLength(whole),
    };
    completed++;
    runMs.push(performance.now() - t0);
  }
}

// The clients' own work (reading and parsing whole answers) must not take the CPU from the server
// whose latency is measured: on two cores it would be timed as the server's.
setPriority(constants.priority.PRIORITY_LOW);

let clients: Promise<void>[] = [];
process.on("message", (raw) => {
  const msg = raw as Start | { type: "stop" };
  if (msg.type === "start") {
    const headers = { "x-api-key": msg.key, "content-type": "application/json" };
    clients = Array.from({ length: msg.n }, () => client(msg.origin, headers, msg.body));
    process.send?.({ type: "started" });
  } else {
    stopping = true;
    const report = (error?: string): HeavyRunsReport => ({ completed, runMs, first, error });
    Promise.all(clients).then(
      () => process.send?.(report()),
      (err: unknown) => process.send?.(report(String(err))),
    );
  }
});
