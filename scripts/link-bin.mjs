// Run by `npm ci` (the root's prepare script): links node_modules/.bin/updown to bin/updown.mjs, so that
// `npx updown` runs the clone's command directly. With a "bin" field in package.json instead, npx
// installs the project itself into its cache (~/.npm/_npx) on first use, and that install warns about
// the engines (twice) against the Node that runs npm, not the Node 24 the command runs on.
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const link = join(root, "node_modules", ".bin", "updown");
mkdirSync(dirname(link), { recursive: true });
rmSync(link, { force: true });
symlinkSync(join("..", "..", "bin", "updown.mjs"), link);
