// Loaded with `node --import` by test/run.ts into every test file's process: at exit, what the file
// cost, for the table `npm test` prints at its end. CPU is user plus system time of this process and
// of the child processes it waited for (servers, the CLI, Chromium, Python); not that of the
// PostgreSQL and Redis servers it talks to, which are no children of it.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const folder = process.env.UPDOWN_TEST_USAGE;
const file = process.argv[1];

/** Seconds of CPU of the waited-for children (Linux's /proc; 0 elsewhere). */
function childrenSeconds() {
  try {
    // Fields after the command's name (which may hold spaces, so cut at its closing parenthesis):
    // cutime and cstime are the 14th and 15th, in clock ticks (100 a second on Linux).
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

if (folder && file) {
  process.on("exit", () => {
    const own = process.cpuUsage();
    const usage = {
      file,
      startedAt: performance.timeOrigin,
      wallSeconds: performance.now() / 1000,
      cpuSeconds: (own.user + own.system) / 1e6 + childrenSeconds(),
      childrenCpuSeconds: childrenSeconds(),
    };
    writeFileSync(join(folder, `${process.pid}.json`), JSON.stringify(usage));
  });
}
