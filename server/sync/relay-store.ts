import Database from 'better-sqlite3';
import { join } from 'node:path';

/**
 * The sealed relay's storage: one SQLite file, `DATA/relay.db` (one file rather than a file per
 * chunk: Subduction left per-file storage after running out of inodes). It holds opaque bytes and
 * the little metadata ordering needs; nothing in it can be read without the history secret.
 *
 * - `spaces`: one per history, by its opaque id, with the SHA-256 of the devices' auth proof.
 * - `chunks`: sealed changes and snapshots in arrival order (`seq`, one sequence for the relay).
 *   A snapshot covers every chunk of its document up to `covers` (the pushing device's cursor:
 *   what it has merged), snapshots included, and the pushing device's own chunks after it that it
 *   lists (`own`); those are marked `covered_by` and deleted after a grace period, so a device
 *   still fetching them meanwhile finds them. Any other chunk after `covers` stays, whatever its
 *   kind: the relay cannot see whether the snapshot holds its changes.
 */

export const RELAY_DB_FILE = 'relay.db';
const SCHEMA_VERSION = 2;
export const KIND = { change: 1, snapshot: 2 } as const;
export type StoredKind = keyof typeof KIND;

export interface StoredChunk {
  seq: number;
  oid: string;
  kind: StoredKind;
  bytes: Buffer;
}

interface StoredRow {
  seq: number;
  oid: string;
  kind: number;
  bytes: Buffer;
}

const toStored = (r: StoredRow): StoredChunk => ({ seq: r.seq, oid: r.oid, kind: r.kind === KIND.snapshot ? 'snapshot' : 'change', bytes: r.bytes });

export class RelayStore {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(dataDir: string) {
    this.db = new Database(join(dataDir, RELAY_DB_FILE));
    // Set before the first table so that freed pages can be given back (compaction shrinks the file).
    this.db.pragma('auto_vacuum = INCREMENTAL');
    this.db.pragma('journal_mode = WAL');
    // An acknowledged chunk survives a power cut, not only a crash of the process.
    this.db.pragma('synchronous = FULL');
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw new Error(`${join(dataDir, RELAY_DB_FILE)} was written by a newer Chyme relay (version ${version}); update this one.`);
    this.db.transaction(() => {
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS spaces (
          sid TEXT PRIMARY KEY,
          auth_sha256 TEXT NOT NULL,
          created_ms INTEGER NOT NULL
        );
        CREATE TABLE IF NOT EXISTS chunks (
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          sid TEXT NOT NULL,
          oid TEXT NOT NULL,
          kind INTEGER NOT NULL,
          covers INTEGER,
          bytes BLOB NOT NULL,
          received_ms INTEGER NOT NULL,
          covered_by INTEGER,
          covered_ms INTEGER
        );
        CREATE INDEX IF NOT EXISTS chunks_live ON chunks (sid, seq) WHERE covered_by IS NULL;
        CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (sid, oid, seq);
        CREATE INDEX IF NOT EXISTS chunks_covered ON chunks (covered_ms) WHERE covered_ms IS NOT NULL;
      `);
      this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
    })();
    this.stmts = {
      space: this.db.prepare('SELECT auth_sha256 FROM spaces WHERE sid = ?').pluck(),
      createSpace: this.db.prepare('INSERT INTO spaces (sid, auth_sha256, created_ms) VALUES (?, ?, ?) ON CONFLICT (sid) DO NOTHING'),
      insert: this.db.prepare('INSERT INTO chunks (sid, oid, kind, covers, bytes, received_ms) VALUES (?, ?, ?, ?, ?, ?)'),
      latest: this.db.prepare('SELECT MAX(seq) FROM chunks').pluck(),
      latestSnapshotCovers: this.db.prepare('SELECT MAX(covers) FROM chunks WHERE sid = ? AND oid = ? AND kind = 2 AND covered_by IS NULL').pluck(),
      cover: this.db.prepare(
        'UPDATE chunks SET covered_by = @seq, covered_ms = @now WHERE sid = @sid AND oid = @oid AND seq < @seq AND covered_by IS NULL AND (seq <= @covers OR seq IN (SELECT value FROM json_each(@own)))',
      ),
      page: this.db.prepare('SELECT seq, oid, kind, bytes FROM chunks WHERE sid = ? AND seq > ? AND covered_by IS NULL ORDER BY seq LIMIT ?'),
      pageOf: this.db.prepare('SELECT seq, oid, kind, bytes FROM chunks WHERE sid = ? AND seq > ? AND covered_by IS NULL AND oid IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT ?'),
      docs: this.db.prepare('SELECT oid, SUM(LENGTH(bytes)) AS bytes FROM chunks WHERE sid = ? AND covered_by IS NULL GROUP BY oid'),
      purge: this.db.prepare('DELETE FROM chunks WHERE covered_ms IS NOT NULL AND covered_ms < ?'),
      stats: this.db.prepare('SELECT COUNT(*) AS chunks, COALESCE(SUM(LENGTH(bytes)), 0) AS bytes FROM chunks WHERE sid = ?'),
    };
  }

  /** The stored SHA-256 of a space's auth proof, or undefined when there is no such space. */
  spaceAuth(sid: string): string | undefined {
    return this.stmts.space.get(sid) as string | undefined;
  }

  createSpace(sid: string, authSha256: string, nowMs: number): void {
    this.stmts.createSpace.run(sid, authSha256, nowMs);
  }

  /** The highest seq stored (0 when empty): a device that has pulled up to it has everything. */
  latestSeq(): number {
    return (this.stmts.latest.get() as number | null) ?? 0;
  }

  /**
   * Stores a chunk; returns its seq once committed, or a sentence when a snapshot is refused (it
   * covers less than the snapshot already there, which would drop changes that one holds).
   */
  append(sid: string, oid: string, kind: StoredKind, bytes: Uint8Array, covers: number | null, nowMs: number, own: readonly number[] = []): number | string {
    return this.db.transaction(() => {
      if (kind === 'snapshot') {
        const have = (this.stmts.latestSnapshotCovers.get(sid, oid) as number | null) ?? -1;
        if (covers === null || covers < have) return `a snapshot must cover at least what the current one covers (seq ${have})`;
        if (covers > this.latestSeq()) return `a snapshot cannot cover seq ${covers}, past the latest stored`;
      }
      const seq = Number(this.stmts.insert.run(sid, oid, KIND[kind], covers, bytes, nowMs).lastInsertRowid);
      // The chunks it holds (snapshots too) are dropped after the grace period: those up to
      // `covers`, the pushing device's cursor, and its own after it (`own`). Another device's chunk
      // stored after `covers` (its snapshot of the same document, pushed meanwhile) holds changes
      // this snapshot may lack, and stays.
      if (kind === 'snapshot') this.stmts.cover.run({ seq, now: nowMs, sid, oid, covers, own: JSON.stringify(own) });
      return seq;
    })();
  }

  /** Up to `limit` live chunks of a space after `after`, in order (covered ones are in a snapshot that is among them). */
  page(sid: string, after: number, limit: number): StoredChunk[] {
    return (this.stmts.page.all(sid, after, limit) as StoredRow[]).map(toStored);
  }

  /** Like page(), but only the chunks of the documents `oids` (a join fetching the newest documents first). */
  pageOf(sid: string, oids: readonly string[], after: number, limit: number): StoredChunk[] {
    return (this.stmts.pageOf.all(sid, after, JSON.stringify(oids), limit) as StoredRow[]).map(toStored);
  }

  /** Every document of a space that has live chunks, with their stored bytes (opaque ids and sizes: what the relay knows anyway). */
  docs(sid: string): Array<[string, number]> {
    return (this.stmts.docs.all(sid) as Array<{ oid: string; bytes: number }>).map((r) => [r.oid, r.bytes]);
  }

  /** Deletes chunks covered before `beforeMs`; gives the freed pages back to the file system. */
  purge(beforeMs: number): number {
    const n = this.stmts.purge.run(beforeMs).changes;
    if (n > 0) this.db.pragma('incremental_vacuum');
    return n;
  }

  stats(sid: string): { chunks: number; bytes: number } {
    return this.stmts.stats.get(sid) as { chunks: number; bytes: number };
  }

  close(): void {
    this.db.close();
  }
}
