import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { basename, join } from "node:path";

/** Writes a zip of one CSV with Python's zipfile (a real zip writer, deflate unless `stored`). */
export function writeZip(path: string, csv: string, options: { stored?: boolean } = {}): void {
  mkdirSync(join(path, ".."), { recursive: true });
  const script = `import sys, zipfile
method = zipfile.ZIP_STORED if sys.argv[3] == "stored" else zipfile.ZIP_DEFLATED
with zipfile.ZipFile(sys.argv[1], "w", method) as z:
    z.writestr(sys.argv[2], sys.stdin.read())`;
  execFileSync(
    "python3",
    ["-c", script, path, basename(path).replace(/\.zip$/, ".csv"), options.stored ? "stored" : "deflate"],
    {
      input: csv,
    },
  );
}
