import { createHash } from 'node:crypto';
import { notifyDataChanged, type AppContext, type DataChange } from '../app-context.js';
import type { Db } from '../db/connection.js';
import { derivedCacheOf } from '../digestion/cache.js';
import {
  completeImport,
  deleteImport,
  deleteImportedRecord,
  deleteImportWrite,
  deleteImportWrites,
  getImport,
  hasImportWrites,
  importedKeyExists,
  importWritesSince,
  insertImport,
  insertImportedRecord,
  insertImportWrite,
  listImportedRecords,
  listImportWritesNewestFirst,
  markImportUndone,
  type ImportRecord,
  type UndoReport,
} from '../db/imports.js';
import { deleteFood, rebuildFoodUsage } from '../db/foods.js';
import { deleteSavedMeal } from '../db/saved-meals.js';
import { saveSettings, type SettingsRecord } from '../db/settings.js';
import { deleteSubscription } from '../db/webhook-subscriptions.js';
import type { BulkTurns } from '../write-gate.js';
import { deleteMeal, getMeal, insertMeal, type MealRecord } from '../db/meals.js';
import { deleteSleep, findOverlappingSleep, getSleep, insertSleep, type SleepRecord } from '../db/sleep.js';
import { ImportDocumentSchema, importDocument, importDocumentSteps, readImportDocument, type DocumentImportCounts, type ImportDocument } from '../export/export.js';
import { newId } from '../ids.js';
import { ConflictError } from '../domain-errors.js';
import { buildMeal, MAX_MEAL_CALORIES, mealResource } from '../nutrition/meals.js';
import { currentSettings } from '../settings.js';
import { sleepDay, sleepResource } from '../sleep/sessions.js';
import { isoUtc } from '../time/tz.js';
import type { ParseOutcome, ParseProgress, ParseRequest } from './parse.js';
import { invalidateFoodSearch } from '../foods/search.js';
import { importDocumentInWorker, importInWorker, parseInWorker, type WriteTurn } from './run-worker.js';
import { ImportCancelledError, ImportInputError, SOURCE_LABELS, type ChosenSource, type ImportResult, type ImportWarning } from './types.js';

export type { ImportResult };

/**
 * Imports: parse (in a worker) → write (in short transactions, all or nothing: see importSteps)
 * → remember what was added so DELETE can undo it. Re-importing adds nothing: every record's stable key is stored once.
 */

export interface ImportOptions {
  files: ParseRequest['files'];
  chosen?: ChosenSource | undefined;
  /** The zone the person named (--tz, the API's timezone); default: their time zone setting. */
  timeZone?: string | undefined;
  dryRun: boolean;
}

class DryRunRollback extends Error {
  constructor(readonly result: ImportResult) {
    super('dry run');
  }
}

const SAMPLE_COUNT = 5;

function describeSource(sources: ChosenSource[]): string {
  return sources.length === 1 ? sources[0]! : 'mixed';
}

/** Kcal from 4/4/9 per gram (what buildMeal derives when the source gave no energy), for the size check. */
function caloriesFromMacros(p: number | null, c: number | null, f: number | null): number {
  return Math.round((4 * (p ?? 0) + 4 * (c ?? 0) + 9 * (f ?? 0)) * 100) / 100;
}

/**
 * What a record holds, as a hash: stored when an import adds it, compared at undo, so an edit is
 * seen even when it happened within the same millisecond (updated times cannot tell).
 */
export function recordFingerprint(kind: 'meal' | 'sleep', r: MealRecord | SleepRecord): string {
  const fields =
    kind === 'meal'
      ? (({ timestampMs, utcOffsetMin, mealType, description, calories, caloriesSource, proteinG, carbsG, fatG, fiberG, sodiumMg, caffeineMg, foods, source, inferredTime }: MealRecord) =>
          [timestampMs, utcOffsetMin, mealType, description, calories, caloriesSource, proteinG, carbsG, fatG, fiberG, sodiumMg, caffeineMg, foods, source, inferredTime])(r as MealRecord)
      : (({ startMs, endMs, efficiency, awakenings, source, nap }: SleepRecord) => [startMs, endMs, efficiency, awakenings, source, nap])(r as SleepRecord);
  return createHash('sha256').update(JSON.stringify(fields)).digest('base64url').slice(0, 22);
}

/**
 * Writes parsed records one at a time: every `next()` writes one record (or one step) in the
 * transaction the caller has open, and the caller may commit between any two (runImport's worker
 * writes in short transactions, see writeInSlices). The import's row is written first and each
 * record is listed in import_writes with it, so an import that does not reach its last step is
 * hidden and then removed whole (discardUnfinishedImports); the last step makes it whole.
 */
export function importSteps(app: AppContext, outcome: ParseOutcome, timezone: string, dryRun: boolean): Generator<void, ImportResult> {
  // Checked now, before any transaction: a document that is not an export writes nothing, and its
  // check (tenths of a second for years of records) holds no lock.
  let document: ImportDocument | undefined;
  if (outcome.chymeDocument !== undefined) {
    const parsed = ImportDocumentSchema.safeParse(outcome.chymeDocument);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ImportInputError(`${outcome.files[0]} is not a valid Chyme export: ${issue.path.join('.') || 'document'} ${issue.message}.`);
    }
    document = parsed.data;
  }
  return writeSteps(app, outcome, timezone, dryRun, document);
}

function* writeSteps(app: AppContext, outcome: ParseOutcome, timezone: string, dryRun: boolean, document: ImportDocument | undefined): Generator<void, ImportResult> {
  const settings = currentSettings(app);
  const now = app.clock.now();
  const id = newId('imp');
  const warnings: ImportWarning[] = [...outcome.warnings];
  const added: Array<{ kind: 'meal' | 'sleep'; day: string }> = [];
  const samples: ImportResult['samples'] = { meals: [], sleep: [] };
  let duplicates = outcome.duplicatesInFiles;
  const record: ImportRecord = {
    id,
    source: outcome.chymeDocument !== undefined ? 'chyme' : describeSource(outcome.sources),
    status: 'completed',
    timezone,
    files: outcome.files,
    mealsAdded: 0,
    sleepAdded: 0,
    duplicatesSkipped: 0,
    warnings: [],
    firstDay: null,
    lastDay: null,
    createdMs: now,
    undo: null,
  };
  insertImport(app.db, record);
  insertImportWrite(app.db, id, 'import', id);
  const keep = (kind: 'meal' | 'sleep', rec: MealRecord | SleepRecord, key: string) => {
    insertImportedRecord(app.db, { sourceKey: key, importId: id, kind, recordId: rec.id, fingerprint: recordFingerprint(kind, rec) });
    insertImportWrite(app.db, id, kind, rec.id);
    added.push({ kind, day: rec.day });
    if (kind === 'meal' && samples.meals.length < SAMPLE_COUNT) samples.meals.push(rec as MealRecord);
    if (kind === 'sleep' && samples.sleep.length < SAMPLE_COUNT) samples.sleep.push(rec as SleepRecord);
  };

  if (document) {
    const counts = yield* importDocumentSteps(app, document, {
      added: (kind, rec) => keep(kind, rec, `chyme:${rec.id}`),
      // Meals and sleep are listed by keep(), with their import_records row.
      wrote: (entity, recordId) => {
        if (entity !== 'meal' && entity !== 'sleep') insertImportWrite(app.db, id, entity, recordId);
      },
    });
    duplicates += counts.meals.skipped + counts.sleep_sessions.skipped;
  } else {
    for (const m of outcome.meals) {
      if (importedKeyExists(app.db, m.key)) {
        duplicates++;
        continue;
      }
      const calories = m.calories ?? caloriesFromMacros(m.proteinG, m.carbsG, m.fatG);
      if (calories > MAX_MEAL_CALORIES) {
        warnings.push({
          file: SOURCE_LABELS[m.source],
          line: null,
          message: `A meal at ${isoUtc(m.timestampMs)} adds up to ${Math.round(calories)} kcal, more than one meal can hold (${MAX_MEAL_CALORIES}); it was skipped.`,
        });
        continue;
      }
      // Energy the source did not give is derived (from the foods, else 4/4/9 per gram of macros)
      // and marked so, never stored as a logged 0.
      const meal = buildMeal(
        settings,
        {
          timestampMs: m.timestampMs,
          utcOffsetMin: m.utcOffsetMin,
          mealType: m.mealType,
          description: m.description,
          macros: { calories: m.calories, protein_g: m.proteinG, carbs_g: m.carbsG, fat_g: m.fatG, fiber_g: m.fiberG },
          micros: { sodium_mg: m.sodiumMg, caffeine_mg: m.caffeineMg },
          foods: m.foods,
          source: m.source,
          inferredTime: m.inferredTime,
        },
        { id: newId('meal'), createdMs: now, updatedMs: now },
      );
      insertMeal(app.db, meal);
      keep('meal', meal, m.key);
      yield;
    }
    for (const s of outcome.sleeps) {
      // A night already recorded (by this import's key, another app, or by hand) is not added again.
      if (importedKeyExists(app.db, s.key) || findOverlappingSleep(app.db, s.startMs, s.endMs)) {
        duplicates++;
        continue;
      }
      const session: SleepRecord = {
        id: newId('sleep'),
        startMs: s.startMs,
        endMs: s.endMs,
        day: sleepDay(app, s.endMs),
        efficiency: s.efficiency,
        awakenings: s.awakenings,
        source: s.source,
        nap: s.nap,
        createdMs: now,
      };
      insertSleep(app.db, session);
      keep('sleep', session, s.key);
      yield;
    }
  }

  const days = added.map((a) => a.day).sort();
  if (outcome.warningsDropped > 0) warnings.push({ file: outcome.files[0] ?? '', line: null, message: `${outcome.warningsDropped} more warnings like these were not listed.` });
  Object.assign(record, {
    mealsAdded: added.filter((a) => a.kind === 'meal').length,
    sleepAdded: added.filter((a) => a.kind === 'sleep').length,
    duplicatesSkipped: duplicates,
    warnings,
    firstDay: days[0] ?? null,
    lastDay: days[days.length - 1] ?? null,
  });
  completeImport(app.db, record);
  deleteImportWrites(app.db, id);
  return { record, dryRun, zoneAssumed: outcome.zoneAssumed, sources: outcome.sources, samples };
}

/** Runs every step of `steps` (importSteps, importDocumentSteps) in the caller's transaction. */
export function allSteps<R>(steps: Generator<void, R>): R {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * One of a worker's transactions (on its own connection): steps for about `budgetMs` (stepsFor),
 * and what they changed that derived data reads, for the main thread's derived-data cache, which
 * otherwise only sees that another connection committed (server/digestion/cache.ts). `told`: the
 * import_writes rowid the previous transaction reported up to. The last transaction reports
 * 'everything' (it also empties import_writes; the whole import is announced after it anyway).
 */
export function writeSlice<R>(db: Db, steps: Generator<void, R>, told: number, budgetMs: number, minSteps: number): { done?: { value: R }; told: number; change: DataChange } {
  return db.transaction(() => {
    const done = stepsFor(steps, budgetMs, minSteps);
    if (done) return { done, told, change: 'everything' as const };
    const wrote = importWritesSince(db, told);
    return { told: wrote.last, change: wrote.settings ? ('everything' as const) : { mealTimes: wrote.mealTimes, sleepEnds: wrote.sleepEnds } };
  }).immediate();
}

/**
 * Runs steps for about `budgetMs`, and at least `minSteps` of them, in the caller's transaction:
 * the result once the last step ran, else undefined (commit, let others write, and call again).
 * The budget is wall time (Node gives a thread no CPU clock of its own): on a machine so loaded
 * that a budget buys a few steps, `minSteps` keeps the number of transactions, each a round trip
 * through the main thread, from growing without bound.
 */
export function stepsFor<R>(steps: Generator<void, R>, budgetMs: number, minSteps: number): { value: R } | undefined {
  const until = performance.now() + budgetMs;
  for (let n = 1; ; n++) {
    const step = steps.next();
    if (step.done) return { value: step.value };
    if (n >= minSteps && performance.now() >= until) return undefined;
  }
}

/** Writes a parsed import in one transaction (or, for a dry run, computes exactly what it would write, then rolls back). */
export function writeImport(app: AppContext, outcome: ParseOutcome, timezone: string, dryRun: boolean): ImportResult {
  return writeWhole(app, importSteps(app, outcome, timezone, dryRun), dryRun);
}

/** writeImport with its steps made (and the document checked) beforehand. */
export function writeWhole(app: AppContext, steps: Generator<void, ImportResult>, dryRun: boolean): ImportResult {
  if (!dryRun)
    return app.bus.write((emit) => {
      const result = allSteps(steps);
      // One recalculation for the whole import, not one announcement per record: derived scores and
      // state follow from the new history at once. (A Chyme export can also bring settings.)
      if (result.record.source === 'chyme' || result.record.mealsAdded + result.record.sleepAdded > 0) notifyDataChanged(app, emit);
      return result;
    });
  try {
    // Thrown inside the write: the transaction rolls back and the bus publishes nothing.
    app.bus.write(() => {
      throw new DryRunRollback(allSteps(steps));
    });
  } catch (err) {
    if (err instanceof DryRunRollback) return err.result;
    throw err;
  }
  throw new Error('unreachable: a dry run always rolls back');
}

/**
 * Parses and writes an import in a worker thread, so that neither the parse (a minute for a
 * gigabyte) nor the write (a second or more for ten years) holds the thread that answers HTTP.
 * The worker writes on its own connection in transactions of ~25 ms, this thread's writers held
 * back during each and writing between them (app.writes); once the last has committed, this
 * thread runs the after-change hooks (derived data, digestion announcements) once, in a write of
 * its own. An import that fails midway is removed whole before it answers. A cancel (`signal`,
 * e.g. the request closed) before the write stops the import and writes nothing
 * (ImportCancelledError); once the write starts it completes. An in-memory database (tests) has no file another connection could open: its records
 * are parsed in the worker and written here.
 */
export async function runImport(app: AppContext, options: ImportOptions, onProgress?: (p: ParseProgress) => void, signal?: AbortSignal): Promise<ImportResult> {
  const timezone = options.timeZone ?? currentSettings(app).timezone;
  const request: ParseRequest = { files: options.files, chosen: options.chosen, timeZone: timezone, timeZoneExplicit: options.timeZone !== undefined };
  if (app.db.memory) {
    const outcome = await parseInWorker(request, onProgress, signal);
    if (signal?.aborted) throw new ImportCancelledError();
    return writeImport(app, outcome, timezone, options.dryRun);
  }
  const turn = writeTurn<ImportResult>(app, signal, (result) => {
    // A Chyme export can also bring foods, saved meals, settings and webhooks.
    const chyme = result.record.source === 'chyme';
    if (result.dryRun || (!chyme && result.record.mealsAdded + result.record.sleepAdded === 0)) return;
    afterWorkerWrite(app, chyme);
  });
  return importInWorker(request, { dbPath: app.db.name, nativeBinding: app.nativeBinding, timezone, dryRun: options.dryRun }, turn, onProgress, signal);
}

/**
 * Imports a Chyme export document posted as JSON (POST /v1/import): read, checked and written in
 * a worker, like runImport's files, so that neither its JSON parse nor its write holds this
 * thread. Throws ImportDocumentInvalid for a document that is not JSON or not an export.
 */
export async function importDocumentBytes(app: AppContext, bytes: Uint8Array): Promise<DocumentImportCounts> {
  if (app.db.memory) return importDocument(app, readImportDocument(bytes));
  const turn = writeTurn<DocumentImportCounts>(app, undefined, () => afterWorkerWrite(app, true));
  return importDocumentInWorker(bytes, { dbPath: app.db.name, nativeBinding: app.nativeBinding, timezone: currentSettings(app).timezone, dryRun: false }, turn);
}

/**
 * A worker's write turn: no other holder of the write gate (another import, a restore) from begin
 * to end, and this thread's writers held back during each of the worker's transactions.
 */
function writeTurn<R>(app: AppContext, signal: AbortSignal | undefined, afterCommit: (result: R) => void): WriteTurn<R> {
  let turns: BulkTurns | undefined;
  return {
    begin: async () => {
      if (signal?.aborted) return undefined;
      turns = await app.writes.acquireBulk();
      return app.clock.now();
    },
    slice: async () => {
      await turns!.take();
      derivedCacheOf(app)?.foreignWriteBegins();
    },
    sliceDone: (change) => {
      derivedCacheOf(app)?.foreignWriteCommitted(change);
      turns!.give();
    },
    end: async (result) => {
      // A worker that died may have committed a transaction it could not report.
      if (result === undefined) derivedCacheOf(app)?.foreignWriteCommitted('everything');
      try {
        if (result !== undefined) afterCommit(result);
        else await discardUnfinishedImports(app);
      } catch (err) {
        // A committed import is whole whatever happens here (the scheduler announces what this
        // missed); what a failed one left is removed at the next start.
        app.log.error(result === undefined ? 'removing an unfinished import failed' : 'after-import recalculation failed', { error: String((err as Error)?.stack ?? err) });
      } finally {
        turns?.end();
      }
    },
  };
}

/** How many of an unfinished import's records one transaction removes (~10 ms). */
const DISCARD_SLICE = 250;

/**
 * Removes what imports that did not finish wrote (listed in import_writes): an import that failed
 * after some of its transactions committed, or one a crash cut off. Undone newest first, in
 * transactions of DISCARD_SLICE records with this thread free between them; the derived data is
 * told after each.
 */
export async function discardUnfinishedImports(app: AppContext): Promise<void> {
  const discard = new Discard(app);
  while (!discard.slice(DISCARD_SLICE)) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * discardUnfinishedImports in one transaction: at start-up (before anything is served) and after a
 * restore. Almost always there is nothing to remove: a read finds that out, and the start does not
 * open a write transaction for it.
 */
export function discardUnfinishedImportsNow(app: AppContext): void {
  if (hasImportWrites(app.db)) new Discard(app).slice(Number.MAX_SAFE_INTEGER);
}

class Discard {
  private usage = false;
  private foods = false;
  private removed = 0;
  constructor(private readonly app: AppContext) {}

  /** Removes up to `limit` records in one transaction; true once nothing is left. */
  slice(limit: number): boolean {
    const { db } = this.app;
    const removedBefore = this.removed;
    const done = this.app.bus.write((emit) => {
      for (const w of listImportWritesNewestFirst(db, limit)) {
        if (w.entity === 'meal') this.usage = deleteMeal(db, w.recordId) || this.usage;
        else if (w.entity === 'sleep') deleteSleep(db, w.recordId);
        else if (w.entity === 'food') this.foods = deleteFood(db, w.recordId) || this.foods;
        else if (w.entity === 'saved_meal') deleteSavedMeal(db, w.recordId);
        else if (w.entity === 'webhook_subscription') deleteSubscription(db, w.recordId);
        else if (w.entity === 'settings') saveSettings(db, JSON.parse(w.recordId) as SettingsRecord);
        else deleteImport(db, w.recordId);
        deleteImportWrite(db, w.rowid);
        this.removed++;
      }
      const left = hasImportWrites(db);
      if (!left && this.usage) rebuildFoodUsage(db);
      // Told in every slice that removed something, not once at the end: between two slices the
      // derived data must not still count the records the first one removed.
      if (this.removed > removedBefore) notifyDataChanged(this.app, emit);
      return !left;
    });
    // Food search ranks by use, and lists the custom foods.
    if (done && (this.foods || this.usage)) invalidateFoodSearch(db);
    return done;
  }
}

/**
 * After a worker's commit, what its connection could not do for this one: the after-change hooks
 * (derived data, digestion announcements), once, and for a Chyme export the food search index.
 * The derived-data cache would notice the other connection's commit by itself (data_version);
 * the announcements and the index would not.
 */
function afterWorkerWrite(app: AppContext, chyme: boolean): void {
  app.bus.write((emit) => notifyDataChanged(app, emit));
  if (chyme) invalidateFoodSearch(app.db);
}

export class ImportAlreadyUndoneError extends ConflictError {
  constructor(message: string) {
    super('import_already_undone', message);
  }
}

/**
 * Undoes an import: removes what it added that nobody edited since; what was edited (or already
 * deleted) is kept and reported. One transaction; derived data recalculated once.
 */
export function undoImport(app: AppContext, id: string): ImportRecord | undefined {
  return app.bus.write((emit) => {
    const record = getImport(app.db, id);
    if (!record) return undefined;
    if (record.status === 'undone') throw new ImportAlreadyUndoneError(`Import ${id} was already undone at ${isoUtc(record.undo!.undoneMs)}.`);
    const report: UndoReport = { undoneMs: app.clock.now(), mealsRemoved: 0, sleepRemoved: 0, kept: [] };
    for (const r of listImportedRecords(app.db, id)) {
      if (r.kind === 'meal') {
        const meal = getMeal(app.db, r.recordId);
        if (!meal) {
          report.kept.push({ id: r.recordId, object: 'nutrition.meal', reason: 'already_deleted' });
        } else if (recordFingerprint('meal', meal) !== r.fingerprint) {
          // Edited since: the person's change is worth more than the undo. Its key stays, so a
          // re-import does not add a second copy beside it.
          report.kept.push({ id: r.recordId, object: 'nutrition.meal', reason: 'edited' });
          continue;
        } else {
          deleteMeal(app.db, r.recordId);
          report.mealsRemoved++;
        }
      } else {
        const session = getSleep(app.db, r.recordId);
        if (session && recordFingerprint('sleep', session) !== r.fingerprint) {
          report.kept.push({ id: r.recordId, object: 'sleep.session', reason: 'edited' });
          continue;
        }
        if (session) {
          deleteSleep(app.db, r.recordId);
          report.sleepRemoved++;
        } else report.kept.push({ id: r.recordId, object: 'sleep.session', reason: 'already_deleted' });
      }
      deleteImportedRecord(app.db, r.sourceKey);
    }
    markImportUndone(app.db, id, report);
    notifyDataChanged(app, emit);
    return getImport(app.db, id)!;
  });
}

/** The API resource of an import (also what `chyme import --json` prints). */
export function importResource(r: ImportRecord, extra?: Pick<ImportResult, 'dryRun' | 'zoneAssumed' | 'sources' | 'samples'>): Record<string, unknown> {
  return {
    object: 'import',
    id: extra?.dryRun ? null : r.id,
    status: extra?.dryRun ? 'dry_run' : r.status,
    source: r.source,
    files: r.files,
    timezone: r.timezone,
    ...(extra ? { zone_assumed: extra.zoneAssumed !== null } : {}),
    meals_added: r.mealsAdded,
    sleep_added: r.sleepAdded,
    duplicates_skipped: r.duplicatesSkipped,
    warnings: r.warnings,
    first_day: r.firstDay,
    last_day: r.lastDay,
    created_at: isoUtc(r.createdMs),
    undo:
      r.undo === null
        ? null
        : { undone_at: isoUtc(r.undo.undoneMs), meals_removed: r.undo.mealsRemoved, sleep_removed: r.undo.sleepRemoved, kept: r.undo.kept },
    ...(extra?.dryRun
      ? { samples: { meals: extra.samples.meals.map(mealResource), sleep_sessions: extra.samples.sleep.map(sleepResource) } }
      : {}),
  };
}
