import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
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
    env: { ...process.env, ...env, PORT: "0" },
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
 * Waits, when less than `ms` is left of the current UTC minute, for the next one to begin. The limiter's
 * minute windows are calendar minutes of the server's real clock (a separate process; no clock can be
 * injected), so requests that must land in one window wait out a minute that is about to end.
 */
export async function roomInMinute(ms: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < ms) await sleep(left + 20);
}
