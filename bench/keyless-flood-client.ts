import { Agent, request } from "node:http";

/**
 * A keyless flood for bench/keyless-flood.ts, run as its own process (so that the bench's timings
 * share no event loop with it): `connections` keep-alive connections to `url`, asking for `paths` in turn at `rate` requests a
 * second in all while it is turned on (stdin: "on", "off"), until SIGTERM; then it prints how many
 * answers of each status it got, as JSON.
 *
 * Usage: node bench/keyless-flood-client.ts URL CONNECTIONS RATE PATH[,PATH...]
 */

const [url, connectionsArg, rateArg, pathsArg] = process.argv.slice(2);
const connections = Number(connectionsArg);
const rate = Number(rateArg);
const paths = (pathsArg ?? "/openapi.json").split(",");
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const statuses: Record<string, number> = {};
let next = 0;
let inFlight = 0;

function fire(): void {
  // Every connection busy: the server is behind, and this request is counted as not sent.
  if (inFlight >= connections) {
    statuses.skipped = (statuses.skipped ?? 0) + 1;
    return;
  }
  inFlight++;
  const path = paths[next++ % paths.length];
  const req = request(
    new URL(path, url),
    { agent, headers: { "accept-encoding": "gzip, deflate, br" } },
    (res) => {
      res.resume();
      res.on("end", () => {
        statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
        inFlight--;
      });
    },
  );
  req.on("error", () => {
    statuses.error = (statuses.error ?? 0) + 1;
    inFlight--;
  });
  req.end();
}

// Requests leave on a fixed schedule, a tick every 5 ms, as many as the rate has owed since the flood
// was turned on. A line "on" or "off" on stdin turns it on or off; each is acknowledged on stdout.
let on = false;
let started = 0;
let owedBefore = 0;
let sent = 0;
const timer = setInterval(() => {
  if (!on) return;
  const owed = owedBefore + Math.floor(((performance.now() - started) / 1000) * rate);
  while (sent < owed) {
    sent++;
    fire();
  }
}, 5);
let input = "";
process.stdin.on("data", (chunk: Buffer) => {
  input += chunk.toString();
  let newline: number;
  while ((newline = input.indexOf("\n")) >= 0) {
    const command = input.slice(0, newline).trim();
    input = input.slice(newline + 1);
    if (command === "on" && !on) {
      on = true;
      started = performance.now();
      owedBefore = sent;
    } else if (command === "off") {
      on = false;
    }
    process.stdout.write(`${command}\n`);
  }
});
process.stdout.write("ready\n");
process.on("SIGTERM", () => {
  clearInterval(timer);
  process.stdout.write(`${JSON.stringify({ sent, statuses })}\n`);
  agent.destroy();
  process.exit(0);
});
