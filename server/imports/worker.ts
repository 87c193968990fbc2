import { parentPort, workerData } from 'node:worker_threads';
import { createAppContext, type AppContext } from '../app-context.js';
import { openDatabase } from '../db/connection.js';
import { deleteImportWrites, insertImportWrite } from '../db/imports.js';
import type { DocumentImportCounts, ImportDocument, importDocumentSteps } from '../export/export.js';
import { newId } from '../ids.js';
import type { ImportResult } from './types.js';
import { silentLogger } from '../logger.js';
import { SLICE_MS } from '../next-turn.js';
import { parseImport } from './parse.js';
import { toWorkerError, type ImportWorkerData, type MainMessage, type WorkerMessage } from './worker-protocol.js';

/**
 * The worker-thread side of an import: parses the files off the thread that answers HTTP and,
 * when asked to (`write`), also writes the records, on a connection of its own to the same file,
 * so that the import's writes (a second or more for ten years of records) do not hold that thread
 * either. They are written in transactions of about SLICE_MS each, every one after the main
 * thread's go-ahead, which comes once the service's own writers are held back
 * (server/write-gate.ts); they write between two. A dry run is one transaction, rolled back.
 */

const PROGRESS_STEP = 16 * 1024 ** 2;

/** ...and at least this many records (an idle machine writes more in 25 ms); see stepsFor. */
const SLICE_MIN_STEPS = 64;

async function main(port: NonNullable<typeof parentPort>, data: ImportWorkerData): Promise<void> {
  // What to write: an app's parsed records, or a posted export document, read and checked here.
  let records: Awaited<ReturnType<typeof parseImport>> | undefined;
  let document: ImportDocument | undefined;
  if ('document' in data) {
    const { readImportDocument } = await import('../export/export.js');
    document = readImportDocument(data.document);
  } else {
    let lastPosted = -Infinity;
    records = await parseImport(data.parse, (p) => {
      if (p.bytesDone - lastPosted >= PROGRESS_STEP || p.bytesDone === p.bytesTotal) {
        lastPosted = p.bytesDone;
        port.postMessage({ type: 'progress', ...p } satisfies WorkerMessage);
      }
    });
    if (!data.write) {
      port.postMessage({ type: 'done', outcome: records } satisfies WorkerMessage);
      return;
    }
  }
  const write = data.write!;
  /** Tells the main thread `message` and waits for its answer ('write', 'continue' or 'cancel'). */
  const ask = (message: WorkerMessage) =>
    new Promise<MainMessage>((resolve) => {
      port.once('message', resolve);
      port.postMessage(message);
    });
  // Loaded only now (a parse-only worker never needs the writers, or SQLite), and before asking to
  // write: the service's writers are held back from then on.
  const [{ importSteps, writeSlice, writeWhole }, { importDocumentSteps }] = await Promise.all([import('./imports.js'), import('../export/export.js')]);
  const db = openDatabase(write.dbPath, { ...(write.nativeBinding ? { nativeBinding: write.nativeBinding } : {}), optimize: false });
  try {
    // This thread's own context: the time is the main thread's (its clock may be a test's), and
    // there are no after-change hooks here: the main thread runs them once the last commit is done.
    let nowMs = NaN;
    const app = createAppContext(db, { now: () => nowMs }, silentLogger, write.nativeBinding);
    // Made now: an export file is checked as they are made (tenths of a second for years of records).
    const steps: Generator<void, ImportResult | DocumentImportCounts> = document
      ? documentSteps(app, document, importDocumentSteps)
      : importSteps(app, records!, write.timezone, write.dryRun);
    const go = await ask({ type: 'parsed' });
    if (go.type !== 'write') return;
    nowMs = go.nowMs;
    if (write.dryRun) {
      port.postMessage({ type: 'written', result: writeWhole(app, steps as Generator<void, ImportResult>, true) } satisfies WorkerMessage);
      return;
    }
    for (let told = 0; ; ) {
      const slice = writeSlice(db, steps, told, SLICE_MS, SLICE_MIN_STEPS);
      if (slice.done) {
        port.postMessage({ type: 'written', result: slice.done.value } satisfies WorkerMessage);
        return;
      }
      told = slice.told;
      if ((await ask({ type: 'committed', change: slice.change })).type !== 'continue') return;
    }
  } finally {
    db.close();
  }
}

/**
 * A posted export's steps, listed in import_writes under an id of their own like an import's, so
 * that a document cut off midway is removed whole too.
 */
function* documentSteps(app: AppContext, document: ImportDocument, steps: typeof importDocumentSteps): Generator<void, DocumentImportCounts> {
  const id = newId('imp');
  const counts = yield* steps(app, document, { wrote: (entity, recordId) => insertImportWrite(app.db, id, entity, recordId) });
  deleteImportWrites(app.db, id);
  return counts;
}

const port = parentPort!;
main(port, workerData as ImportWorkerData).catch((err: unknown) => {
  port.postMessage({ type: 'error', error: toWorkerError(err) } satisfies WorkerMessage);
});
