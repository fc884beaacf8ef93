import { type ChildProcess, spawn } from "node:child_process";
import { BIN } from "./paths.ts";

export { BIN };

/** `updown serve` as a real process, for the tests that need several, or need to stop one. */

export interface ServeProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** What the process wrote, request logs left out. */
  output(): string;
}

/** Starts `updown serve --no-seed` on a free port and resolves once it says where it serves. */
export function startServeProcess(env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, "serve", "--no-seed"], {
    // Runs scheduled as requests are, unless the test says otherwise (TEST_CONFIG in app.ts says why).
    env: { ...process.env, BACKTEST_PRIORITY: "normal", ...env, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let partial = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (!/"msg":"(incoming request|request completed)"/.test(line)) out += `${line}\n`;
      }
      const m = /Serving (http:\/\/127\.0\.0\.1:(\d+))\/v1/.exec(out);
      if (m) resolve({ url: m[1], port: Number(m[2]), child, output: () => out });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`serve exited (${code}) before listening:\n${out}`)));
  });
}

/**
 * A CLOCK_OFFSET_MS that puts the clock of a server started now at the start of a UTC minute: requests
 * sent within the next minute of real time then land in one window of its limiter, with no wait.
 */
export function minuteStartOffset(): number {
  return 60_000 - (Date.now() % 60_000);
}

/** What is left (ms) of the current UTC minute on the clock of a server run with `offsetMs`. */
export function minuteLeft(offsetMs: number): number {
  return 60_000 - ((Date.now() + offsetMs) % 60_000);
}
