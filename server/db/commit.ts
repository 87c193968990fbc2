import type { SqlDatabase } from './sql-api.js';

/**
 * Runs a top-level write transaction without waiting for the disk (synchronous=NORMAL for that one
 * commit), for bookkeeping that a power cut may roll back without harm: the webhook dispatcher's
 * attempt records, whose loss only means a delivery is attempted again (at-least-once). In WAL
 * mode such a commit is still atomic and survives a crash of the process; only an operating-system
 * crash or power cut can undo it, and the next full commit (any user write) makes it durable too.
 * A commit waiting for the disk held the thread for ~9 ms on the development machine, two per
 * webhook attempt: that capped fan-out at ~50 deliveries a second.
 */
export function relaxedCommit<T>(db: SqlDatabase, fn: () => T): T {
  if (db.inTransaction) throw new Error('relaxedCommit must run outside any transaction');
  // Prepared (and so cached) rather than db.pragma(), which compiles the statement on every call.
  db.prepare('PRAGMA synchronous = NORMAL').run();
  try {
    return db.transaction(fn).immediate();
  } finally {
    db.prepare('PRAGMA synchronous = FULL').run();
  }
}
