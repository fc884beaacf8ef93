import type { FastifyReply } from "fastify";
import type { JsonBytes, LentJson } from "../wire/json-bytes.ts";

const MIN_CAPACITY = 64 * 1024;

/**
 * Buffers lent to response bodies that are sent once and not kept: a live market's page, and a
 * resolved market's page on its first request (the page cache keeps a page from its second,
 * PageCache.admits). The buffer the page was written into is sent as it is, the writer continues in a
 * free buffer (lend() says of what size), and the sent buffer comes back when the response has been
 * handed to the OS ('finish').
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
  /** Free buffers by capacity (powers of two, as a writer grows by doubling). */
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;
  private readonly maxFreeBytes: number;
  private allocations = 0;

  constructor(maxFreeBytes = 64 * 1024 * 1024) {
    this.maxFreeBytes = maxFreeBytes;
  }

  /**
   * w's bytes as a body, without copying them: w's buffer is lent to the body, and w continues in a
   * free buffer. Its capacity stays while pages fill at least an eighth of it, so that pages of about
   * one size (with books, 1.4 to 2.1 MB) reuse buffers of one size without growing the writer; a page
   * far smaller starts the writer over at the power of two above twice its size (at least 64 KiB), so
   * that a lent buffer stays within a few times its page. Returns how to give the lent buffer back.
   */
  lend(w: JsonBytes): LentJson {
    const capacity = w.buf.length;
    const nextCapacity =
      w.pos >= capacity / 8
        ? capacity
        : Math.max(MIN_CAPACITY, 2 ** Math.ceil(Math.log2(Math.max(1, 2 * w.pos))));
    let next = this.free.get(nextCapacity)?.pop();
    if (next) {
      this.freeBytes -= nextCapacity;
    } else {
      next = Buffer.allocUnsafeSlow(nextCapacity);
      this.allocations++;
    }
    const written = w.handOver(next);
    const lent = Buffer.from(written.buffer, written.byteOffset, capacity);
    let returned = false;
    const release = () => {
      if (returned) return;
      returned = true;
      this.giveBack(lent);
    };
    return { body: lent.subarray(0, written.length), release };
  }

  /**
   * Takes a buffer back to lend again: one this lent (its release does it), or one a page reader thread
   * was sent back (page-reader-thread.ts: the same memory, come back as a new ArrayBuffer).
   */
  giveBack(buffer: Buffer): void {
    if (this.freeBytes + buffer.length > this.maxFreeBytes) return;
    let list = this.free.get(buffer.length);
    if (!list) {
      list = [];
      this.free.set(buffer.length, list);
    }
    list.push(buffer);
    this.freeBytes += buffer.length;
  }

  /** Buffers allocated so far (a buffer given back is used again instead). */
  get allocated(): number {
    return this.allocations;
  }

  /** Bytes held in free buffers. */
  get idleBytes(): number {
    return this.freeBytes;
  }
}

/** Sends lent bytes as the reply's body; they go back once the answer has been handed to the OS. */
export function sendLent(reply: FastifyReply, lent: LentJson): FastifyReply {
  reply.raw.once("finish", lent.release);
  return reply.send(lent.body);
}
