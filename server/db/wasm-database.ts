import type { Database as WasmDb, PreparedStatement, Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import { migrate } from './migrate.js';
import { migrations, type Migration } from './migrations.js';
import type { SqlDatabase, SqlRunResult, SqlStatement, SqlTransaction, TransactionBody } from './sql-api.js';

/**
 * The SQL API (sql-api.ts) over SQLite-WASM's OO1 connection, with better-sqlite3's semantics, so
 * that the migrations and the table modules run unchanged in the phone's worker. No DOM and no
 * Node: the caller brings the initialised module and an open OO1 connection (OPFS in the worker,
 * memory in the unit test, which holds both implementations to the same answers).
 *
 * Where the two could differ, this follows better-sqlite3:
 * - every JS number is bound as a REAL (so `typeof(?)` is 'real' for 3), a bigint as an INTEGER,
 *   a string as TEXT, a Uint8Array as a BLOB, null and undefined as NULL; anything else (a
 *   boolean, a Date) is a TypeError, not OO1's silent 0/1;
 * - an INTEGER is read as a number (safeIntegers off), a BLOB as a Uint8Array (Buffer is Node's);
 * - `run()` reports `changes` 0 unless the statement changed rows, and `lastInsertRowid` as a
 *   number; `get()`/`all()`/`pluck()` on a statement without result columns throw;
 * - a failed statement throws an `SqliteError` whose `code` is SQLite's extended code name
 *   (`SQLITE_CONSTRAINT_PRIMARYKEY`), which api/errors.ts reads.
 */
export class SqliteError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
    this.name = 'SqliteError';
  }
}

/**
 * Compiled statements kept per SQL text. OO1 statements live in the WASM heap until finalized
 * (the garbage collector never frees them), so they are reused rather than compiled per
 * `prepare()`, and finalized when evicted or at close; the bound matches connection.ts's cache.
 */
const COMPILED_LIMIT = 500;

interface Compiled {
  stmt: PreparedStatement;
  /** Result columns (0: the statement returns no rows). */
  columns: string[];
  /** Parameter name without its prefix, by index (1-based); undefined for `?`. */
  names: (string | undefined)[];
  hasNamed: boolean;
}

type Mode = 'default' | 'deferred' | 'immediate' | 'exclusive';
const BEGIN: Record<Mode, string> = { default: 'BEGIN', deferred: 'BEGIN DEFERRED', immediate: 'BEGIN IMMEDIATE', exclusive: 'BEGIN EXCLUSIVE' };
// better-sqlite3's savepoint name, so a database moved between the two behaves identically.
const SAVEPOINT = '`\t_bs3.\t`';

export class WasmDatabase implements SqlDatabase {
  private readonly compiled = new Map<string, Compiled>();
  private open = true;

  constructor(
    private readonly sqlite3: Sqlite3Static,
    private readonly db: WasmDb,
  ) {}

  get inTransaction(): boolean {
    return this.open && this.sqlite3.capi.sqlite3_get_autocommit(this.handle()) === 0;
  }

  prepare(source: string): SqlStatement {
    return new WasmStatement(this, source, this.compile(source), false);
  }

  exec(source: string): this {
    this.guard(() => this.db.exec(source));
    return this;
  }

  pragma(source: string, options: { simple?: boolean } = {}): unknown {
    if (typeof source !== 'string') throw new TypeError('Expected first argument to be a string');
    // As better-sqlite3: a PRAGMA may be read as rows even when it sets a value (and so has none).
    const statement = new WasmStatement(this, `PRAGMA ${source}`, this.compile(`PRAGMA ${source}`), true);
    return options.simple ? statement.pluck().get() : statement.all();
  }

  transaction<F extends TransactionBody>(fn: F): SqlTransaction<F> {
    if (typeof fn !== 'function') throw new TypeError('Expected first argument to be a function');
    const wrap = (mode: Mode) =>
      (...args: unknown[]): unknown => {
        const nested = this.inTransaction;
        const [before, after, undo] = nested
          ? [`SAVEPOINT ${SAVEPOINT}`, `RELEASE ${SAVEPOINT}`, `ROLLBACK TO ${SAVEPOINT}`]
          : [BEGIN[mode], 'COMMIT', 'ROLLBACK'];
        this.prepare(before).run();
        try {
          const result = fn(...args);
          if (result && typeof (result as { then?: unknown }).then === 'function') throw new TypeError('Transaction function cannot return a promise');
          this.prepare(after).run();
          return result;
        } catch (err) {
          // SQLite may already have rolled back (a failed COMMIT, some I/O errors): then there is nothing to undo.
          if (this.inTransaction) {
            this.prepare(undo).run();
            if (nested) this.prepare(after).run();
          }
          throw err;
        }
      };
    const variants = { deferred: wrap('deferred'), immediate: wrap('immediate'), exclusive: wrap('exclusive') };
    return Object.assign(wrap('default'), variants) as unknown as SqlTransaction<F>;
  }

  close(): this {
    if (!this.open) return this;
    for (const { stmt } of this.compiled.values()) stmt.finalize();
    this.compiled.clear();
    this.db.close();
    this.open = false;
    return this;
  }

  /** The connection's C handle (a WASM pointer). */
  handle(): number {
    if (!this.open || this.db.pointer === undefined) throw new TypeError('The database connection is not open');
    return this.db.pointer;
  }

  get capi(): Sqlite3Static['capi'] {
    return this.sqlite3.capi;
  }

  /** Runs `fn`, turning an OO1 error into an SqliteError with better-sqlite3's code and message. */
  guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof this.sqlite3.SQLite3Error) || !this.open) throw err;
      this.check(this.sqlite3.capi.sqlite3_extended_errcode(this.handle()));
      throw err;
    }
  }

  /** Throws the connection's error when a C call's result code is not SQLITE_OK. */
  check(rc: number): void {
    if (rc === this.sqlite3.capi.SQLITE_OK) return;
    const capi = this.sqlite3.capi;
    // The connection's extended code refines rc when it is about the same failure (a bind's
    // SQLITE_RANGE, say, leaves the connection's last error as it was).
    const extended = capi.sqlite3_extended_errcode(this.handle());
    const code = (extended & 0xff) === (rc & 0xff) ? extended : rc;
    const message = code === extended ? capi.sqlite3_errmsg(this.handle()) : capi.sqlite3_errstr(rc);
    throw new SqliteError(message, capi.sqlite3_js_rc_str(code) ?? `SQLITE_${code}`);
  }

  private compile(source: string): Compiled {
    const cached = this.compiled.get(source);
    if (cached) return cached;
    this.handle();
    const stmt = this.guard(() => this.db.prepare(source));
    const capi = this.sqlite3.capi;
    const names: (string | undefined)[] = [undefined];
    for (let i = 1; i <= stmt.parameterCount; i++) names.push(capi.sqlite3_bind_parameter_name(stmt, i)?.slice(1) || undefined);
    const compiled: Compiled = { stmt, columns: stmt.columnCount > 0 ? stmt.getColumnNames() : [], names, hasNamed: names.some((n) => n !== undefined) };
    if (this.compiled.size >= COMPILED_LIMIT) {
      for (const { stmt: old } of this.compiled.values()) old.finalize();
      this.compiled.clear();
    }
    this.compiled.set(source, compiled);
    return compiled;
  }

  /** The compiled statement for `source`, compiled again if the cache was emptied since. */
  compiledFor(source: string): Compiled {
    return this.compile(source);
  }
}

class WasmStatement implements SqlStatement {
  private plucking = false;
  private readonly returnsData: boolean;

  constructor(
    private readonly owner: WasmDatabase,
    private readonly source: string,
    compiled: Compiled,
    pragmaMode: boolean,
  ) {
    this.returnsData = compiled.columns.length > 0 || pragmaMode;
  }

  pluck(toggle = true): this {
    if (!this.returnsData) throw new TypeError('The pluck() method is only for statements that return data');
    this.plucking = toggle;
    return this;
  }

  run(...params: unknown[]): SqlRunResult {
    return this.execute(params, (c) => {
      const capi = this.owner.capi;
      const db = this.owner.handle();
      const before = capi.sqlite3_total_changes(db);
      c.stmt.step();
      // As better-sqlite3: one step, then the reset that finishes the statement (a RETURNING
      // statement's rows beyond the first) and reports its error, before the counts are read.
      this.owner.check(capi.sqlite3_reset(c.stmt));
      const changes = capi.sqlite3_total_changes(db) === before ? 0 : capi.sqlite3_changes(db);
      return { changes, lastInsertRowid: Number(capi.sqlite3_last_insert_rowid(db)) };
    });
  }

  get(...params: unknown[]): unknown {
    this.requireData();
    return this.execute(params, (c) => (c.stmt.step() ? this.row(c) : undefined));
  }

  all(...params: unknown[]): unknown[] {
    this.requireData();
    return this.execute(params, (c) => {
      const rows: unknown[] = [];
      while (c.stmt.step()) rows.push(this.row(c));
      return rows;
    });
  }

  private requireData(): void {
    if (!this.returnsData) throw new TypeError('This statement does not return data. Use run() instead');
  }

  private execute<T>(params: unknown[], body: (c: Compiled) => T): T {
    const c = this.owner.compiledFor(this.source);
    try {
      this.bind(c, params);
      return this.owner.guard(() => body(c));
    } finally {
      // Ready for the next use, and no bound blob or text kept alive in the WASM heap. The C calls,
      // not OO1's reset(), which would throw the failed step's error again over the one thrown.
      this.owner.capi.sqlite3_reset(c.stmt);
      c.stmt.clearBindings();
    }
  }

  private row(c: Compiled): unknown {
    if (this.plucking) return readColumn(c.stmt, 0);
    const row: Record<string, unknown> = {};
    for (let i = 0; i < c.columns.length; i++) row[c.columns[i]!] = readColumn(c.stmt, i);
    return row;
  }

  /** better-sqlite3's binder: positional values and arrays in order, one plain object for the named. */
  private bind(c: Compiled, params: unknown[]): void {
    const total = c.names.length - 1;
    let anon = 0;
    let count = 0;
    let boundObject = false;
    const nextAnon = () => {
      do anon++;
      while (anon <= total && c.names[anon] !== undefined);
      return anon;
    };
    const bindAnon = (value: unknown) => {
      const index = nextAnon();
      if (index > total) throw new RangeError('Too many parameter values were provided');
      this.bindValue(c, index, value);
      count++;
    };
    for (const param of params) {
      if (Array.isArray(param)) {
        for (const value of param) bindAnon(value);
      } else if (isPlainObject(param)) {
        if (boundObject) throw new TypeError('You cannot specify named parameters in two different objects');
        boundObject = true;
        for (let i = 1; i <= total; i++) {
          const name = c.names[i];
          if (name === undefined) continue;
          if (!Object.prototype.hasOwnProperty.call(param, name)) throw new RangeError(`Missing named parameter "${name}"`);
          this.bindValue(c, i, param[name]);
          count++;
        }
      } else if (typeof param === 'object' && param !== null && !(param instanceof Uint8Array) && c.hasNamed) {
        throw new TypeError('Named parameters can only be passed within plain objects');
      } else {
        bindAnon(param);
      }
    }
    if (count < total) {
      if (!boundObject && c.hasNamed) throw new TypeError('Missing named parameters');
      throw new RangeError('Too few parameter values were provided');
    }
  }

  private bindValue(c: Compiled, index: number, value: unknown): void {
    const capi = this.owner.capi;
    if (typeof value === 'number') {
      // OO1 would bind an integral number as an INTEGER.
      this.owner.check(capi.sqlite3_bind_double(c.stmt, index, value));
    } else if (typeof value === 'string' || typeof value === 'bigint' || value instanceof Uint8Array || value === null || value === undefined) {
      this.owner.guard(() => c.stmt.bind(index, value ?? null));
    } else {
      throw new TypeError('SQLite3 can only bind numbers, strings, bigints, buffers, and null');
    }
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function readColumn(stmt: PreparedStatement, index: number): unknown {
  const value = stmt.get(index);
  // OO1 answers an INTEGER beyond 2^53 as a bigint; better-sqlite3 (safeIntegers off) as a number.
  return typeof value === 'bigint' ? Number(value) : value;
}

/** The most of the write-ahead log left on the phone's storage after a checkpoint. */
const WAL_KEPT_BYTES = 1024 * 1024;

/**
 * Chyme's schema on an OO1 connection: the pragmas connection.ts sets that apply here, then every
 * migration.
 *
 * WAL in EXCLUSIVE locking mode: the OPFS VFSs have no shared memory, which WAL needs only to share
 * its index between connections; with the lock held exclusively SQLite keeps the index in its own
 * heap instead. The phone has one connection (the pool VFS holds every file's access handle
 * exclusively, and one tab opens it), so the lock costs nothing, and it spares each statement
 * outside a transaction the checks for a hot journal and for another writer (a size and a read of
 * the file each time). Every OPFS call is a system call on a phone (an IPC to the browser process
 * in a private window): a logged meal's request made 55 writes, 11 reads, 11 size checks and 4
 * flushes with the rollback journal kept between transactions, and 27 writes and 1 flush with
 * the log (bench/phone.ts counts them); the worker gathers those writes until the flush, which
 * makes them one (renderer/src/phone/coalesced-writes.ts). With synchronous=FULL that flush is in
 * every commit, so a committed write survives a tab kill and a power cut alike; a crash mid-commit
 * leaves frames without a commit record, which the next open ignores.
 */
export function openWasmChymeDatabase(sqlite3: Sqlite3Static, connection: WasmDb, list: Migration[] = migrations): WasmDatabase {
  const db = new WasmDatabase(sqlite3, connection);
  try {
    // Before anything reads the file: WAL without shared memory needs the lock from the start.
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // The pool VFS names (and flushes) a file when SQLite creates it: the log is kept between
    // checkpoints rather than created again, and capped so a large join's log gives its space back.
    db.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
    db.pragma('foreign_keys = ON');
    migrate(db, list);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
