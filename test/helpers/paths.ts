import { join, resolve } from "node:path";

/** The repository's root, wherever a test file sits in the tree that mirrors `src`. */
export const ROOT = resolve(import.meta.dirname, "..", "..");
/** The `updown` command as `npx updown` runs it. */
export const BIN = join(ROOT, "bin", "updown.mjs");
/** Recorded upstream data and protocol messages kept for the tests. */
export const FIXTURES = join(ROOT, "test", "fixtures");

/**
 * Names a folder of one test run (`npm test` makes it and removes it after, test/run.ts) where the
 * first process that seeds makeTestApp's demo data leaves the seeded SQLite database's bytes, and the
 * other processes read them instead of seeding again (test/helpers/app.ts).
 */
export const SEEDED_IMAGES_VARIABLE = "UPDOWN_TEST_SEEDED_IMAGES";

/** Names the folder where test/helpers/file-usage.mjs leaves what each test file cost (test/run.ts). */
export const USAGE_VARIABLE = "UPDOWN_TEST_USAGE";
