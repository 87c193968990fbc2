import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createAppContext, type AppContext } from '../../app-context.js';
import { systemClock } from '../../clock.js';
import { importResource, runImport } from '../../imports/imports.js';
import { ImportInputError, parseSourceName, SOURCE_LABELS } from '../../imports/types.js';
import { createLogger } from '../../logger.js';
import { defaultDbPath } from '../../paths.js';
import { openCommandDatabase } from '../context.js';
import { DatabaseReadOnlyError } from '../../db/connection.js';
import { initSettings } from '../../settings.js';
import { isValidTimeZone } from '../../time/tz.js';

export const IMPORT_USAGE = `  chyme import FILE... [--from apple-health|cronometer|myfitnesspal|oura|fitbit|chyme] [--tz IANA] [--dry-run] [--json] [--db FILE]`;

/** A bad command line: the dispatcher prints it with the usage (exit 2). */
export class ImportUsageError extends Error {}

/**
 * `chyme import`: the same import as POST /v1/imports, against the database file directly. Safe
 * while the app or `chyme serve` has the file open (WAL; the write waits for the lock). Exit codes:
 * 0 imported (or dry run), 1 the files were refused (the sentence says why), 2 usage.
 */
export async function importCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      from: { type: 'string' },
      tz: { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      db: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length === 0) throw new ImportUsageError('import needs at least one FILE (an export zip, or files from it)');
  const chosen = values.from === undefined ? undefined : parseSourceName(values.from);
  if (values.from !== undefined && !chosen) throw new ImportUsageError(`--from must be apple-health, cronometer, myfitnesspal, oura, fitbit or chyme, not ${values.from}`);
  if (values.tz !== undefined && !isValidTimeZone(values.tz)) throw new ImportUsageError(`--tz must be an IANA time zone such as Europe/Berlin, not ${values.tz}`);

  const dbPath = values.db ?? defaultDbPath();
  const db = openCommandDatabase(dbPath);
  try {
    // The import's worker writes on a connection of its own; say so before it starts.
    if (db.readonly) throw new DatabaseReadOnlyError(dbPath);
    const clock = systemClock;
    initSettings(db, clock.now());
    const log = createLogger({ silent: true });
    const app: AppContext = createAppContext(db, clock, log);
    const showProgress = !values.json && process.stderr.isTTY;
    let result;
    try {
      result = await runImport(
        app,
        { files: positionals.map((p) => ({ path: resolve(p), name: basename(p) })), chosen, timeZone: values.tz, dryRun: values['dry-run'] ?? false },
        showProgress ? (p) => process.stderr.write(`\rReading… ${Math.floor((p.bytesDone / Math.max(1, p.bytesTotal)) * 100)} %`) : undefined,
      );
    } catch (err) {
      if (showProgress) process.stderr.write('\n');
      if (err instanceof ImportInputError) {
        process.stderr.write(`chyme: ${err.message}\n`);
        process.exitCode = 1;
        return;
      }
      throw err;
    }
    if (showProgress) process.stderr.write('\r');
    const resource = importResource(result.record, result);
    if (values.json) {
      delete resource.samples;
      process.stdout.write(`${JSON.stringify(resource, null, 2)}\n`);
      return;
    }
    const r = result.record;
    const from = r.source === 'mixed' ? result.sources.map((s) => SOURCE_LABELS[s]).join(' and ') : SOURCE_LABELS[r.source as keyof typeof SOURCE_LABELS];
    const range = r.firstDay ? `, ${r.firstDay} to ${r.lastDay}` : '';
    const verb = result.dryRun ? 'Would import' : 'Imported';
    process.stdout.write(`${verb} from ${from}: ${r.mealsAdded} meals and ${r.sleepAdded} sleep sessions${range}.\n`);
    if (r.duplicatesSkipped > 0) process.stdout.write(`Skipped ${r.duplicatesSkipped} already imported or duplicate records.\n`);
    if (result.zoneAssumed) process.stdout.write(`Times without an offset were read in ${result.zoneAssumed} (choose another with --tz).\n`);
    for (const w of r.warnings) process.stdout.write(`Warning: ${w.file}${w.line === null ? '' : ` line ${w.line}`}: ${w.message}\n`);
    if (result.dryRun) process.stdout.write('Dry run: nothing was written.\n');
    else process.stdout.write(`Import ${r.id}; undo it in the app's Import screen or with DELETE /v1/imports/${r.id}.\n`);
  } finally {
    db.close();
  }
}
