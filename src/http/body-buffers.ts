import type { FastifyReply } from "fastify";
import type { JsonBytes } from "../domain/json-bytes.ts";

/**
 * Buffers lent to response bodies that are sent once and not kept: a live market's page, and a
 * resolved market's page on its first request (the page cache keeps a page from its second,
 * PageCache.admits). The bytes are copied into a free buffer, and the buffer comes back when the
 * response has been handed to the OS ('finish').
 *
 * Why not a new Buffer per page: its bytes are memory outside V8's heap that V8 counts toward starting
 * a full collection. At a few hundred kilobytes a page, reading cold pages started one about every
 * 100 ms, each marking the whole heap (measured with --trace-gc: docs/decisions.md). Buffers lent and
 * returned are allocated once.
 *
 * A response that never finishes (the client went away) keeps its buffer, which the collector frees;
 * a buffer is reused only after 'finish', when nothing can read it any more.
 */
export class BodyBuffers {
  /** Free buffers by capacity (the size classes of classOf). */
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;
  private readonly maxFreeBytes: number;
  /** Buffers allocated so far (a test reads it: bodies sent one after another reuse one buffer). */
  allocated = 0;

  constructor(maxFreeBytes = 64 * 1024 * 1024) {
    this.maxFreeBytes = maxFreeBytes;
  }

  /** Sends the bytes written into w as the reply's body from a lent buffer. */
  send(reply: FastifyReply, w: JsonBytes): FastifyReply {
    const { body, release } = this.lend(w);
    reply.raw.once("finish", release);
    return reply.send(body);
  }

  /** A buffer holding a copy of w's bytes, and how to give it back once nothing reads it. */
  lend(w: JsonBytes): { body: Buffer; release: () => void } {
    const n = w.pos;
    const capacity = classOf(n);
    let buffer = this.free.get(capacity)?.pop();
    if (buffer) {
      this.freeBytes -= capacity;
    } else {
      buffer = Buffer.allocUnsafeSlow(capacity);
      this.allocated++;
    }
    buffer.set(w.buf.subarray(0, n), 0);
    const lent = buffer;
    let returned = false;
    const release = () => {
      if (returned) return;
      returned = true;
      this.giveBack(lent);
    };
    return { body: lent.subarray(0, n), release };
  }

  private giveBack(buffer: Buffer): void {
    if (this.freeBytes + buffer.length > this.maxFreeBytes) return;
    let list = this.free.get(buffer.length);
    if (!list) {
      list = [];
      this.free.set(buffer.length, list);
    }
    list.push(buffer);
    this.freeBytes += buffer.length;
  }

  /** Bytes held in free buffers. */
  get idleBytes(): number {
    return this.freeBytes;
  }
}

/**
 * The capacity lent for n bytes: at least 64 KiB, else n rounded up to a quarter of its power of two
 * (so at most 25 % more than asked, with few enough classes that buffers are reused).
 */
export function classOf(n: number): number {
  const min = 64 * 1024;
  if (n <= min) return min;
  const step = 2 ** (Math.floor(Math.log2(n)) - 2);
  return Math.ceil(n / step) * step;
}
