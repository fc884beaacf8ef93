import { Agent, request } from "node:http";

/**
 * A keyless flood, run as its own process (so that the test's measurements share no event loop with
 * it): `connections` keep-alive connections to `url`, asking for `paths` in turn at `rate` requests a
 * second in all, until SIGTERM; then it prints how many answers of each status it got, as JSON.
 *
 * Usage: node test/helpers/keyless-flood.ts URL CONNECTIONS RATE PATH[,PATH...]
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
  const req = request(new URL(path, url), { agent, headers: { "accept-encoding": "gzip, deflate, br" } }, (res) => {
    res.resume();
    res.on("end", () => {
      statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
      inFlight--;
    });
  });
  req.on("error", () => {
    statuses.error = (statuses.error ?? 0) + 1;
    inFlight--;
  });
  req.end();
}

// Requests leave on a fixed schedule, a tick every 5 ms, as many as the rate has owed since the start.
const started = performance.now();
let sent = 0;
const timer = setInterval(() => {
  const owed = Math.floor(((performance.now() - started) / 1000) * rate);
  while (sent < owed) {
    sent++;
    fire();
  }
}, 5);
process.stdout.write("flooding\n");
process.on("SIGTERM", () => {
  clearInterval(timer);
  process.stdout.write(`${JSON.stringify({ sent, statuses })}\n`);
  agent.destroy();
  process.exit(0);
});
