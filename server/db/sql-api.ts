/**
 * The part of better-sqlite3's API that Chyme's SQL uses (the table modules of db/ and the
 * migrations): statements with run/get/all and pluck, exec, transactions (nested ones are
 * savepoints), pragma. better-sqlite3's Database implements it on Node; `wasm-database.ts`
 * implements it over SQLite-WASM for the phone's worker, so the same table modules run on both.
 * Parameters are bound as better-sqlite3 binds them: positional values or arrays, and one plain
 * object for the named ones (`@name`, `:name`, `$name`, keyed without the prefix).
 */
export interface SqlRunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface SqlStatement {
  run(...params: unknown[]): SqlRunResult;
  /** The first row (an object, or its first column after `pluck()`), or undefined. */
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /** Rows become their first column's value (`pluck(false)` turns it off again). */
  pluck(toggle?: boolean): this;
}

/**
 * A transaction's body. Typed as better-sqlite3 types it (`any[]`, and the arguments by `infer`
 * rather than `Parameters`), because TypeScript compares generic signatures by their constraints:
 * any other spelling makes better-sqlite3's Database no longer an SqlDatabase.
 */
export type TransactionBody = (...args: any[]) => unknown;
type ArgumentsOf<F extends TransactionBody> = F extends (...args: infer A) => unknown ? A : never;

/** A transaction function: BEGIN/COMMIT around `fn`, or a savepoint inside an open transaction. */
export interface SqlTransaction<F extends TransactionBody> {
  (...args: ArgumentsOf<F>): ReturnType<F>;
  /** BEGIN DEFERRED, BEGIN IMMEDIATE (takes the write lock first), BEGIN EXCLUSIVE. */
  deferred(...args: ArgumentsOf<F>): ReturnType<F>;
  immediate(...args: ArgumentsOf<F>): ReturnType<F>;
  exclusive(...args: ArgumentsOf<F>): ReturnType<F>;
}

export interface SqlDatabase {
  prepare(source: string): SqlStatement;
  /** Runs one or more statements without parameters. */
  exec(source: string): this;
  transaction<F extends TransactionBody>(fn: F): SqlTransaction<F>;
  /** `PRAGMA <source>`: every row, or with `simple` the first column of the first row. */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  readonly inTransaction: boolean;
  close(): this;
}

/**
 * SQLite's data_version: it changes when another connection (the CLI, a restore tool) commits to
 * the file, never for this connection's own writes. In-memory caches compare it to stay true.
 */
export function dataVersion(db: SqlDatabase): number {
  return (db.prepare('PRAGMA data_version').get() as { data_version: number }).data_version;
}
