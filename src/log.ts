import { type Logger as PinoLogger, pino } from "pino";

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

/**
 * The server's logger: pino's JSON lines on stdout through an asynchronous destination (sonic-boom),
 * which gathers lines in memory and writes them in the background, 4 KiB or more at a time (or whatever
 * has gathered, once a second), so that a request's log line costs the request a string and no write(2). What is still buffered when the
 * server stops is written by `flush` (serve awaits it on SIGTERM and SIGINT, after the last answer).
 */
/** How long a line may wait in the server log's buffer before it is written anyway. */
const LOG_FLUSH_MS = 1000;

export function serverLog(level: string, fd = 1): ServerLog {
  const destination = pino.destination({ dest: fd, sync: false, minLength: 4096 });
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
    destination,
  );
  setInterval(() => {
    if (!pending) return;
    pending = false;
    try {
      destination.flush();
    } catch {
      // Not open yet, or gone: the next tick or the stop's flush writes it.
      pending = true;
    }
  }, LOG_FLUSH_MS).unref();
  return {
    logger,
    flush: () =>
      new Promise<void>((resolve) => {
        try {
          destination.flush(() => resolve());
        } catch {
          resolve();
        }
      }),
    flushSync: () => {
      try {
        destination.flushSync();
      } catch {
        // Nothing buffered, or the descriptor is gone: nothing more to write.
      }
    },
  };
}
