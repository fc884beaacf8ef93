import { writeSync } from "node:fs";
import { type DestinationStream, type Logger as PinoLogger, pino } from "pino";

/**
 * The one logger interface of the service: structured fields and a message, at four levels. It is
 * the shape of pino's (Fastify's `app.log`) methods, so the server hands its own logger to anything
 * that logs; the command-line processes write the same JSON lines to stderr with `stderrLogger`.
 */

/** What a line is about, beside its message: names and numbers a log pipeline can filter on. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
}

type LevelName = keyof Logger;

/** pino's numbers, so that a line from `updown collect` reads like one from `updown serve`. */
const LEVEL_NUMBER: Record<LevelName, number> = { debug: 20, info: 30, warn: 40, error: 50 };

/** `LOG_LEVEL`'s words (pino's), as the lowest number written; `silent` writes nothing. */
const THRESHOLD: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};

export interface StderrLoggerOptions {
  /** A `LOG_LEVEL` word; lines below it are not written. Default `info`. */
  level?: string;
  /** Where the lines go; default process.stderr. */
  write?: (line: string) => void;
  /** Epoch milliseconds for the `time` field; default the wall clock. */
  now?: () => number;
}

/** One JSON object a line, pino's fields (`level`, `time`, `msg`) around the caller's. */
export function stderrLogger(options: StderrLoggerOptions = {}): Logger {
  const threshold = THRESHOLD[options.level ?? "info"] ?? THRESHOLD.info;
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const now = options.now ?? Date.now;
  const at =
    (level: LevelName) =>
    (fields: LogFields, message: string): void => {
      if (LEVEL_NUMBER[level] < threshold) return;
      write(`${JSON.stringify({ level: LEVEL_NUMBER[level], time: now(), ...fields, msg: message })}\n`);
    };
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

const nothing = (): void => {};

/** For tests and for callers that were given no logger. */
export const silentLogger: Logger = { debug: nothing, info: nothing, warn: nothing, error: nothing };

/**
 * A logger that writes through whichever logger `current` returns at the time of each line: for what
 * must log before the logger it should use exists (the server's limiter connects before the app).
 */
export function deferredLogger(current: () => Logger): Logger {
  return {
    debug: (fields, message) => current().debug(fields, message),
    info: (fields, message) => current().info(fields, message),
    warn: (fields, message) => current().warn(fields, message),
    error: (fields, message) => current().error(fields, message),
  };
}

/** An error's message for a log field or line, whatever was thrown. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The server's pino logger and how to write out what it still holds. */
export interface ServerLog {
  logger: PinoLogger;
  /** Writes every buffered line; the server awaits it before it exits. */
  flush(): Promise<void>;
  /** The same, synchronously: for a stop that exits at once (the close grace passed). */
  flushSync(): void;
}

/** How long a line may wait in the server log's buffer before it is written anyway. */
const LOG_FLUSH_MS = 1000;

/** How many characters of lines gather before they go to the destination as one string. */
const BATCH_CHARS = 4096;

/**
 * The log's lines gathered into strings of 4 KiB or more before sonic-boom sees them. sonic-boom
 * measures the byte length of the string it appends a line to on every write (up to 16 KiB, flattened
 * each time): a request line cost 9 to 10 µs through sonic-boom alone, about 4 through the batch
 * (issue 20, point 8; docs/decisions.md). Handed 4 KiB at a time, it measures once per batch. The lines
 * stay in the order they were written.
 */
export class LineBatch {
  private lines: string[] = [];
  private chars = 0;
  private readonly destination: DestinationStream;
  private readonly batchChars: number;

  constructor(destination: DestinationStream, batchChars = BATCH_CHARS) {
    this.destination = destination;
    this.batchChars = batchChars;
  }

  /** pino's stream interface: one line, newline included. */
  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.batchChars) this.handOn();
    return true;
  }

  /** Gives the destination what has gathered (before a flush, or once the batch is full). */
  handOn(): void {
    const text = this.take();
    if (text !== "") this.destination.write(text);
  }

  /** What has gathered, removed from the batch: for a synchronous write at exit. */
  take(): string {
    if (this.lines.length === 0) return "";
    const text = this.lines.length === 1 ? this.lines[0] : this.lines.join("");
    this.lines = [];
    this.chars = 0;
    return text;
  }
}

/** Writes the whole text to the descriptor now, however many writes it takes; gives up on an error. */
function writeAllSync(fd: number, text: string): void {
  let bytes = Buffer.from(text);
  let busy = 0;
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(writeSync(fd, bytes));
    } catch (err) {
      // A non-blocking pipe that is full: a reader may drain it; anything else cannot be written at exit.
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== "EAGAIN" && code !== "EBUSY") || ++busy > 1000) return;
    }
  }
}

/**
 * The server's logger: pino's JSON lines on stdout through an asynchronous destination (sonic-boom),
 * which gathers lines in memory and writes them in the background, 4 KiB or more at a time (or whatever
 * has gathered, once a second), so that a request's log line costs the request a string and no
 * write(2). The lines reach sonic-boom through a LineBatch. What is still buffered when the server
 * stops is written by `flush` (serve awaits it on SIGTERM and SIGINT, after the last answer), and by
 * `flushSync` or the process's exit when the stop cannot wait.
 */
export function serverLog(level: string, fd = 1): ServerLog {
  const destination = pino.destination({ dest: fd, sync: false, minLength: 4096 });
  const batch = new LineBatch(destination);
  // A quiet server's lines would wait for 4 KiB more: written within a second however few they are.
  let pending = false;
  const logger = pino(
    {
      level,
      hooks: {
        streamWrite: (line) => {
          pending = true;
          return line;
        },
      },
    },
    batch,
  );
  setInterval(() => {
    if (!pending) return;
    pending = false;
    try {
      batch.handOn();
      destination.flush();
    } catch {
      // Not open yet, or gone: the next tick or the stop's flush writes it.
      pending = true;
    }
  }, LOG_FLUSH_MS).unref();
  // pino writes out sonic-boom's buffer at exit; the batch's lines follow it, written at once.
  const flushSync = () => {
    try {
      destination.flushSync();
    } catch {
      // Nothing buffered, or the descriptor is gone: nothing more to write.
    }
    writeAllSync(fd, batch.take());
  };
  process.once("exit", flushSync);
  return {
    logger,
    flush: () =>
      new Promise<void>((resolve) => {
        try {
          batch.handOn();
          destination.flush(() => resolve());
        } catch {
          resolve();
        }
      }),
    flushSync,
  };
}
