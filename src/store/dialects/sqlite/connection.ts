import { mkdirSync, statfsSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";

/** Parses `sqlite:./data/updown.db`, `sqlite::memory:` or a bare path. */
export function sqlitePathOf(url: string): string {
  return url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
}

/** SQLite's primary result code of a driver error (the low byte of its extended code), or null. */
export function sqliteResultOf(err: unknown): number | null {
  const { errcode } = err as { errcode?: unknown };
  return err instanceof Error && typeof errcode === "number" ? errcode & 0xff : null;
}

const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;

/** Free space below which a database whose writes failed is not ready, whatever a probe says. */
const MIN_FREE_BYTES = 256 * 1024;

/** A write the disk refused: full, or an I/O error. */
function isWriteFailure(err: unknown): boolean {
  const result = sqliteResultOf(err);
  return result === SQLITE_IOERR || result === SQLITE_FULL;
}

/**
 * The one connection of an embedded store, shared by its stores of each capability: prepared
 * statements cached by their text, and write transactions. node:sqlite is synchronous; every call
 * finishes before it returns, so the stores' async interfaces cost one microtask and no thread hops.
 */
export class SqliteConnection {
  readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private readonly arrayStatements = new Map<string, StatementSync>();
  /** The database file; null in memory. */
  private readonly path: string | null;
  /** The error of the last write the disk refused (full, I/O), until a write succeeds. */
  private unwritable: Error | null = null;

  constructor(path: string) {
    this.path = path === ":memory:" || path === "" ? null : path;
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    // busy_timeout first: switching to WAL waits for other connections opening the same new file.
    // Reads through a memory map rather than a read(2) per page: a cold page of snapshots walks the
    // overflow pages of about five large block rows, which measured about 20 % faster mapped.
    this.db.exec(
      "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA mmap_size = 1073741824;",
    );
  }

  /**
   * A cached statement returning rows as objects. Statements run on every request are given as
   * constants: a template literal would build (and the cache hash) a new string per call.
   */
  stmt(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** A cached statement that returns rows as arrays of column values (no object built per row). */
  arrayStmt(sql: string): StatementSync {
    let s = this.arrayStatements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      s.setReturnArrays(true);
      this.arrayStatements.set(sql, s);
    }
    return s;
  }

  /**
   * Runs `work` in a write transaction, taken at once (BEGIN IMMEDIATE) so that it never fails to
   * upgrade halfway. `work` must be synchronous: an await would let another caller's statement run
   * inside it.
   */
  transaction<T>(work: () => T): T {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const result = work();
      this.db.exec("COMMIT");
      this.unwritable = null;
      return result;
    } catch (err) {
      // On a full disk or an I/O error SQLite may have rolled the transaction back itself; a ROLLBACK
      // then fails ("cannot rollback - no transaction is active") and would hide the cause.
      if (this.db.isTransaction) {
        try {
          this.db.exec("ROLLBACK");
        } catch {
          // The error that made us roll back is the one to report.
        }
      }
      if (isWriteFailure(err)) this.unwritable = err as Error;
      throw err;
    }
  }

  /**
   * Throws while the database cannot be written: after a write failed for want of space or an I/O
   * error, until a write succeeds again. While the disk has less than MIN_FREE_BYTES free it throws
   * that failure again; else it tries a write itself (the header's user_version, a field the store
   * does not use, rewritten so that a commit reaches the disk). A small write alone could succeed in
   * the space a failed one left in the WAL while real writes still fail: hence the free space first.
   */
  checkWritable(): void {
    if (this.unwritable === null) return;
    if (this.path !== null) {
      const fs = statfsSync(dirname(this.path));
      if (fs.bavail * fs.bsize < MIN_FREE_BYTES) throw this.unwritable;
    }
    this.transaction(() => this.db.exec("PRAGMA user_version = 0"));
  }

  close(): void {
    this.statements.clear();
    this.arrayStatements.clear();
    if (this.db.isOpen) this.db.close();
  }
}
