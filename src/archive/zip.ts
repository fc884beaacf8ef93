import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { type Readable, Transform } from "node:stream";
import { crc32, createInflateRaw } from "node:zlib";

/**
 * The one file of a zip archive (data.binance.vision's zips hold one CSV each), streamed: the central
 * directory is read from the end of the file, then the entry's compressed bytes are inflated as they
 * are read, so memory stays bounded whatever the file's size. Zip64 sizes and offsets are read; the
 * entry's CRC-32 is checked at its end.
 */

export class ZipError extends Error {}

interface Entry {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  localHeaderOffset: number;
}

const EOCD_SIGNATURE = 0x06054b50;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const MAX_COMMENT = 0xffff;

async function readAt(path: string, position: number, length: number): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The entries of the central directory. */
async function entries(path: string, size: number): Promise<Entry[]> {
  const tailLength = Math.min(size, 22 + MAX_COMMENT + 20);
  const tail = await readAt(path, size - tailLength, tailLength);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ZipError("not a zip file (no end of central directory)");
  let count = tail.readUInt16LE(eocd + 10);
  let dirSize = tail.readUInt32LE(eocd + 12);
  let dirOffset = tail.readUInt32LE(eocd + 16);
  if (eocd >= 20 && tail.readUInt32LE(eocd - 20) === ZIP64_LOCATOR_SIGNATURE) {
    const record = await readAt(path, Number(tail.readBigUInt64LE(eocd - 12)), 56);
    count = Number(record.readBigUInt64LE(32));
    dirSize = Number(record.readBigUInt64LE(40));
    dirOffset = Number(record.readBigUInt64LE(48));
  }
  const dir = await readAt(path, dirOffset, dirSize);
  const out: Entry[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > dir.length || dir.readUInt32LE(at) !== CENTRAL_SIGNATURE)
      throw new ZipError("a broken central directory");
    const nameLength = dir.readUInt16LE(at + 28);
    const extraLength = dir.readUInt16LE(at + 30);
    const commentLength = dir.readUInt16LE(at + 32);
    const entry: Entry = {
      name: dir.toString("utf8", at + 46, at + 46 + nameLength),
      method: dir.readUInt16LE(at + 10),
      crc: dir.readUInt32LE(at + 16),
      compressedSize: dir.readUInt32LE(at + 20),
      localHeaderOffset: dir.readUInt32LE(at + 42),
    };
    readZip64Extra(dir.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength), entry, {
      uncompressed: dir.readUInt32LE(at + 24) === 0xffffffff,
    });
    out.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return out;
}

/** Zip64's extra field holds, in order, the sizes and the offset whose 32-bit fields are all ones. */
function readZip64Extra(extra: Buffer, entry: Entry, flags: { uncompressed: boolean }): void {
  for (let at = 0; at + 4 <= extra.length;) {
    const id = extra.readUInt16LE(at);
    const length = extra.readUInt16LE(at + 2);
    if (id === 0x0001) {
      let field = at + 4;
      if (flags.uncompressed) field += 8;
      if (entry.compressedSize === 0xffffffff) {
        entry.compressedSize = Number(extra.readBigUInt64LE(field));
        field += 8;
      }
      if (entry.localHeaderOffset === 0xffffffff)
        entry.localHeaderOffset = Number(extra.readBigUInt64LE(field));
      return;
    }
    at += 4 + length;
  }
}

/** The archive's only entry as a stream of its bytes (a zip of several files is refused). */
export async function zipEntryStream(
  path: string,
  size: number,
): Promise<{ name: string; stream: Readable }> {
  const list = (await entries(path, size)).filter((e) => !e.name.endsWith("/"));
  if (list.length !== 1) throw new ZipError(`expected one file in the zip, found ${list.length}`);
  const [entry] = list;
  if (entry.method !== 0 && entry.method !== 8)
    throw new ZipError(`${entry.name}: compression method ${entry.method} is not stored or deflate`);
  const local = await readAt(path, entry.localHeaderOffset, 30);
  if (local.length < 30 || local.readUInt32LE(0) !== LOCAL_SIGNATURE)
    throw new ZipError("a broken local header");
  const start = entry.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  const raw = createReadStream(path, { start, end: start + entry.compressedSize - 1 });
  let crc = 0;
  // The check is the stream's last step, so a mismatch fails the reader before its end.
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      crc = crc32(chunk, crc);
      done(null, chunk);
    },
    flush(done) {
      done(crc >>> 0 === entry.crc ? null : new ZipError(`${entry.name}: CRC-32 mismatch`));
    },
  });
  const stages: (Readable | Transform)[] =
    entry.method === 8 ? [raw, createInflateRaw(), checked] : [raw, checked];
  for (let i = 0; i + 1 < stages.length; i++) {
    stages[i].on("error", (err) => checked.destroy(err));
    stages[i].pipe(stages[i + 1] as Transform);
  }
  return { name: entry.name, stream: checked };
}
