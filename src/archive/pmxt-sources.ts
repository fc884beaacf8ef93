import { createWriteStream, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";

/**
 * Which PMXT files an import reads (docs/archives.md): paths, folders (their `.parquet` files in name
 * order) and `https://` URLs, or the hour files of a range under a base folder or URL. An hour file
 * absent from its folder, or answered 404 by its server, is a missing hour: no events that hour.
 */

/** One hour's file name in the archive: `polymarket_orderbook_2026-05-01T10.parquet`. */
export function hourFileName(hourStartSec: number): string {
  return `polymarket_orderbook_${new Date(hourStartSec * 1000).toISOString().slice(0, 13)}.parquet`;
}

/** The UTC hour (its first second) a file's name names, or null. */
export function hourOfFileName(name: string): number | null {
  const m = /polymarket_orderbook_(\d{4}-\d{2}-\d{2})T(\d{2})\.parquet$/.exec(name);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}T${m[2]}:00:00Z`);
  return Number.isNaN(ms) ? null : ms / 1000;
}

/** A file to read: a local path, or a URL fetched to a temporary file first. */
export type PmxtInput =
  { kind: "path"; path: string } | { kind: "url"; url: string; hourMissingOn404: boolean };

function isUrl(text: string): boolean {
  return /^https?:\/\//i.test(text);
}

/** The files named on the command line: a folder gives its `.parquet` files in name order. */
export function inputsOf(args: readonly string[]): PmxtInput[] {
  const out: PmxtInput[] = [];
  for (const arg of args) {
    if (isUrl(arg)) out.push({ kind: "url", url: arg, hourMissingOn404: false });
    else if (existsSync(arg) && statSync(arg).isDirectory()) {
      for (const name of readdirSync(arg)
        .filter((n) => n.endsWith(".parquet"))
        .sort())
        out.push({ kind: "path", path: join(arg, name) });
    } else out.push({ kind: "path", path: arg });
  }
  return out;
}

/**
 * The hour files from `fromSec`'s hour to `toSec`'s, under a folder or URL; hours whose file a folder
 * lacks are returned apart, as missing.
 */
export function hourInputs(
  base: string,
  fromSec: number,
  toSec: number,
): { inputs: PmxtInput[]; missing: string[] } {
  const inputs: PmxtInput[] = [];
  const missing: string[] = [];
  for (let hour = Math.floor(fromSec / 3600) * 3600; hour <= toSec; hour += 3600) {
    const name = hourFileName(hour);
    if (isUrl(base))
      inputs.push({ kind: "url", url: `${base.replace(/\/+$/, "")}/${name}`, hourMissingOn404: true });
    else if (existsSync(join(base, name))) inputs.push({ kind: "path", path: join(base, name) });
    else missing.push(name);
  }
  return { inputs, missing };
}

/** A URL's file downloaded to a temporary folder (removed by `dispose`); null when 404 means a missing hour. */
export async function download(
  input: Extract<PmxtInput, { kind: "url" }>,
  fetchFn: typeof fetch = fetch,
): Promise<{ path: string; dispose: () => void } | null> {
  const response = await fetchFn(input.url);
  if (response.status === 404 && input.hourMissingOn404) return null;
  if (!response.ok || !response.body) throw new Error(`${input.url}: HTTP ${response.status}`);
  const dir = mkdtempSync(join(tmpdir(), "updown-pmxt-"));
  const path = join(dir, basename(new URL(input.url).pathname) || "download.parquet");
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(path));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { path, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
