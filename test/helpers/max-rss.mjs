// Loaded with `node --import` into a child process whose peak memory a test measures: at exit, the
// process's peak resident set size (KiB) as the last line on stderr.
import { writeSync } from "node:fs";

process.on("exit", () => {
  writeSync(2, `\nmax-rss-kib ${process.resourceUsage().maxRSS}\n`);
});
