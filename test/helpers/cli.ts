import { spawnSync } from "node:child_process";
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
