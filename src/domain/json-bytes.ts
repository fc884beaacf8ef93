/**
 * A growable byte buffer that JSON text is written into directly, so that a page of snapshots
 * becomes bytes without building (and then UTF-8 encoding) one long string. Meant to be reused:
 * `reset()` and write, then copy the bytes out with `toBuffer()`.
 */
export class JsonBytes {
  buf: Uint8Array;
  pos = 0;
  private static readonly encoder = new TextEncoder();

  constructor(capacity = 1 << 16) {
    this.buf = new Uint8Array(capacity);
  }

  reset(): void {
    this.pos = 0;
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

  /** Any text, as UTF-8. */
  utf8(s: string): void {
    this.reserve(s.length * 3);
    this.pos += JsonBytes.encoder.encodeInto(s, this.buf.subarray(this.pos)).written;
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
