import { constants, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import type { CoinEvent, MarketEvent, MarketEventType } from "../domain/event.ts";

/**
 * The compressed block of a stream's events (a market's, or one coin's updates of one topic): what
 * an event store keeps in one row. Lossless: decoding gives back every event as it was encoded.
 */

/** One event as a block holds it: its times, its type (a market event's; "" for coin updates) and its message. */
interface BlockEvent {
  receivedUs: number;
  timestampMs: number;
  type: string;
  message: Readonly<Record<string, unknown>>;
}

const FORMAT_JSON = 1;

function encodeBlock(events: readonly BlockEvent[], level: number): Uint8Array {
  const json = JSON.stringify(events.map((e) => [e.receivedUs, e.timestampMs, e.type, e.message]));
  const body = zstdCompressSync(Buffer.from(json), {
    params: { [constants.ZSTD_c_compressionLevel]: level },
  });
  return Buffer.concat([Buffer.of(FORMAT_JSON), body]);
}

function decodeBlock(bytes: Uint8Array): BlockEvent[] {
  if (bytes[0] !== FORMAT_JSON) throw new Error(`event block of unknown format ${bytes[0]}`);
  const text = zstdDecompressSync(bytes.subarray(1)).toString();
  return (JSON.parse(text) as [number, number, string, Record<string, unknown>][]).map(
    ([receivedUs, timestampMs, type, message]) => ({ receivedUs, timestampMs, type, message }),
  );
}

/** The level of blocks written to last (small, rewritten soon) and of those kept for good. */
export const EVENT_BLOCK_LEVEL = { pending: 1, sealed: 9 } as const;

export function encodeMarketEvents(events: readonly MarketEvent[], level: number): Uint8Array {
  return encodeBlock(events, level);
}

export function decodeMarketEvents(bytes: Uint8Array): MarketEvent[] {
  return decodeBlock(bytes).map((e) => ({
    receivedUs: e.receivedUs,
    timestampMs: e.timestampMs,
    type: e.type as MarketEventType,
    message: e.message,
  }));
}

/** A coin-price update as a block of one coin and topic holds it (the coin and topic are the block's). */
export type CoinUpdate = Omit<CoinEvent, "coin" | "topic">;

export function encodeCoinUpdates(events: readonly CoinUpdate[], level: number): Uint8Array {
  return encodeBlock(
    events.map((e) => ({
      receivedUs: e.receivedUs,
      timestampMs: e.timestampMs,
      type: "",
      message: e.message,
    })),
    level,
  );
}

export function decodeCoinUpdates(bytes: Uint8Array): CoinUpdate[] {
  return decodeBlock(bytes).map((e) => ({
    receivedUs: e.receivedUs,
    timestampMs: e.timestampMs,
    message: e.message,
  }));
}
