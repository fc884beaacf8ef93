import { join, resolve } from "node:path";

/** The repository's root, wherever a test file sits in the tree that mirrors `src`. */
export const ROOT = resolve(import.meta.dirname, "..", "..");
/** The `updown` command as `npx updown` runs it. */
export const BIN = join(ROOT, "bin", "updown.mjs");
/** Recorded upstream data and protocol messages kept for the tests. */
export const FIXTURES = join(ROOT, "test", "fixtures");
