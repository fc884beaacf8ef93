/**
 * JSON bytes in a buffer lent to an answer (src/http/body-buffers.ts, or a page reader thread's):
 * `release` once they have been sent, and not before, since the buffer is then written again.
 */
export interface LentJson {
  body: Buffer;
  release(): void;
}

/**
 * A growable byte buffer that JSON text is written into directly, so that a page of snapshots
 * becomes bytes without building (and then UTF-8 encoding) one long string. Meant to be reused:
 * `reset()` and write, then copy the bytes out with `toBuffer()`.
 */
export class JsonBytes {
  buf: Uint8Array;
  /** A view of `buf` for writing several bytes in one store (little-endian words); replaced with it. */
  view: DataView;
  pos = 0;
  /** A Buffer view of `buf` for latin1(), made again when `buf` is replaced. */
  private latin1View: Buffer | null = null;
  private static readonly encoder = new TextEncoder();

  constructor(capacity = 1 << 16) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
  }

  reset(): void {
    this.pos = 0;
  }

  /**
   * Hands over the bytes written (a view of the current buffer, no copy) and continues in `next`,
   * empty: for a caller that sends the bytes and gives the buffer back later (body-buffers.ts).
   */
  handOver(next: Uint8Array): Uint8Array {
    const written = this.buf.subarray(0, this.pos);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength);
    this.pos = 0;
    return written;
  }

  /** Makes room for `n` more bytes; writers that index `buf` themselves call it first. */
  reserve(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  byte(b: number): void {
    if (this.pos === this.buf.length) this.grow(1);
    this.buf[this.pos++] = b;
  }

  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Text the caller knows is ASCII (JSON punctuation, numbers, ISO times). */
  ascii(s: string): void {
    this.reserve(s.length);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /**
   * A finite number exactly as String() prints it. Numbers of at most 8 decimals from 1e-6 up to 1e7
   * (prices) are printed from the integer count of 10^-8 units: a decimal of at most 15 significant
   * digits is the shortest text that reads back as its double, so its digits with trailing zeros
   * dropped are String()'s. Anything else goes through String().
   */
  number(x: number): void {
    if ((x >= 1e-6 && x < 1e7) || x === 0) {
      const units = Math.round(x * 1e8);
      if (units / 1e8 === x) {
        // units < 1e15: the quotient cannot round up to the next integer; whole and frac are int32.
        let whole = Math.floor(units / 1e8);
        let frac = (units - whole * 1e8) | 0;
        this.reserve(17);
        const buf = this.buf;
        let p = this.pos;
        const wholeDigits =
          whole < 10
            ? 1
            : whole < 100
              ? 2
              : whole < 1e3
                ? 3
                : whole < 1e4
                  ? 4
                  : whole < 1e5
                    ? 5
                    : whole < 1e6
                      ? 6
                      : 7;
        p += wholeDigits;
        for (let e = p - 1; e >= p - wholeDigits; e--) {
          const q = (whole / 10) | 0;
          buf[e] = 48 + (whole - q * 10);
          whole = q;
        }
        if (frac !== 0) {
          let digits = 8;
          let q = (frac / 10) | 0;
          while (frac === q * 10) {
            frac = q;
            q = (frac / 10) | 0;
            digits--;
          }
          buf[p++] = 46; // .
          p += digits;
          for (let e = p - 1; e >= p - digits; e--) {
            q = (frac / 10) | 0;
            buf[e] = 48 + (frac - q * 10);
            frac = q;
          }
        }
        this.pos = p;
        return;
      }
    }
    this.ascii(String(x));
  }

  /** Any text, as UTF-8. */
  utf8(s: string): void {
    this.reserve(s.length * 3);
    this.pos += JsonBytes.encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
  }

  /** Characters [start, end) of a string the caller knows is ASCII (latin1 writes one byte each). */
  latin1(s: string, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    let out = this.latin1View;
    if (out === null || out.buffer !== this.buf.buffer) {
      out = Buffer.from(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
      this.latin1View = out;
    }
    this.pos += out.write(start === 0 && end === s.length ? s : s.slice(start, end), this.pos, n, "latin1");
  }
  /** A copy of the bytes written, exactly as long as they are. */
  toBuffer(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }

  /** Bytes [start, end) as a string; the text written is ASCII, so latin1 decoding is exact. */
  text(start = 0, end = this.pos): string {
    return Buffer.from(this.buf.buffer, this.buf.byteOffset + start, end - start).toString("latin1");
  }
}
