import { spawn, spawnSync } from "node:child_process";
import { BIN } from "./paths.ts";

/** `keys list`'s first line, before any key. */
export const KEYS_HEADER = "id\tplan\taccount\tstate\tname\n";

/** `updown` run to its end as a real process, with `env` over this process's environment. */
export function runUpdown(args: string[], env: Record<string, string> = {}) {
  const res = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** runUpdown without blocking this process: for a command that talks to a server this test runs. */
export function runUpdownAsync(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
