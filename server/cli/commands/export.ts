import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { exportDocument, mealsCsv } from '../../export/export.js';
import { commandContext, ensureSettings, withExistingDatabase } from '../context.js';
import { dbPathFrom, fail, parseFlags, type Command } from '../usage.js';

export const exportCommand: Command = {
  name: 'export',
  usage: ['chyme export [--format json|csv] [--out FILE] [--db FILE]'],
  run: exportData,
};

/** Writes a whole file or nothing: a temporary name, flushed, then renamed. */
function writeFileAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.partial`;
  try {
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * `chyme export`: the same documents as GET /v1/export (JSON, which `chyme import` and POST
 * /v1/import take back) and GET /v1/export/meals.csv, to stdout or --out FILE.
 */
async function exportData(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, { format: { type: 'string' }, out: { type: 'string' }, db: { type: 'string' } });
  const format = values.format ?? 'json';
  if (format !== 'json' && format !== 'csv') fail(`--format must be json or csv, not ${format}`);
  const dbPath = dbPathFrom(values);
  await withExistingDatabase(dbPath, (db) => {
    ensureSettings(db, dbPath);
    const app = commandContext(db);
    // One read transaction: the document is one consistent moment even while a server writes.
    const text = db.transaction(() => (format === 'json' ? `${JSON.stringify(exportDocument(app), null, 2)}\n` : mealsCsv(app)))();
    if (values.out === undefined) {
      process.stdout.write(text);
      return;
    }
    const out = resolve(values.out);
    writeFileAtomically(out, text);
    process.stderr.write(`Exported to ${out}\n`);
  });
}
