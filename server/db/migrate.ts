import type { Migration } from './migrations.js';
import type { SqlDatabase } from './sql-api.js';

/**
 * Bringing a schema up to date, on any connection that implements the SQL API: better-sqlite3's
 * on Node (connection.ts) and SQLite-WASM's in the phone's worker, so both run the same
 * migrations the same way.
 */

export class DatabaseTooNewError extends Error {
  constructor(readonly found: number, readonly supported: number) {
    super(
      `This database was written by a newer Chyme (schema version ${found}; this build knows up to ${supported}). ` +
        'Update Chyme to open it; nothing was changed.',
    );
    this.name = 'DatabaseTooNewError';
  }
}

export function schemaVersion(db: SqlDatabase): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Applies pending migrations, each in its own transaction with its version bump. */
export function migrate<D extends SqlDatabase>(db: D, migrations: Migration[], beforeMigrate?: (db: D, fromVersion: number) => void): void {
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const current = schemaVersion(db);
  if (current > latest) throw new DatabaseTooNewError(current, latest);
  if (beforeMigrate && current > 0 && current < latest) beforeMigrate(db, current);
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (migration.version <= schemaVersion(db)) continue;
    // IMMEDIATE takes the write lock first, so two processes opening a new file cannot both
    // run the same migration.
    db.transaction(() => {
      if (migration.version <= schemaVersion(db)) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${Math.trunc(migration.version)}`);
    }).immediate();
  }
}
