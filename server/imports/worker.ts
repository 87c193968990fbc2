import { parentPort, workerData } from 'node:worker_threads';
import { createAppContext } from '../app-context.js';
import { openDatabase } from '../db/connection.js';
import type { ImportDocument } from '../export/export.js';
import { silentLogger } from '../logger.js';
import { parseImport } from './parse.js';
import { toWorkerError, type ImportWorkerData, type MainMessage, type WorkerMessage } from './worker-protocol.js';

/**
 * The worker-thread side of an import: parses the files off the thread that answers HTTP and,
 * when asked to (`write`), also writes the records, on a connection of its own to the same file,
 * so that the import's one transaction (up to a second for ten years of records) does not hold
 * that thread either. The write waits for the main thread's go-ahead, which comes once the
 * service's own writers are held back (server/write-gate.ts).
 */

const PROGRESS_STEP = 16 * 1024 ** 2;

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
  const go = await new Promise<MainMessage>((resolve) => {
    port.once('message', resolve);
    port.postMessage({ type: 'parsed' } satisfies WorkerMessage);
  });
  if (go.type === 'cancel') return;
  // Loaded only now: a parse-only worker never needs the writers (or SQLite).
  const [{ writeImport }, { importDocument }] = await Promise.all([import('./imports.js'), import('../export/export.js')]);
  const db = openDatabase(write.dbPath, { ...(write.nativeBinding ? { nativeBinding: write.nativeBinding } : {}), optimize: false });
  try {
    // This thread's own context: the time is the main thread's (its clock may be a test's), and
    // there are no after-change hooks here: the main thread runs them once this commit is done.
    const app = createAppContext(db, { now: () => go.nowMs }, silentLogger, write.nativeBinding);
    const result = document ? importDocument(app, document) : writeImport(app, records!, write.timezone, write.dryRun);
    port.postMessage({ type: 'written', result } satisfies WorkerMessage);
  } finally {
    db.close();
  }
}

const port = parentPort!;
main(port, workerData as ImportWorkerData).catch((err: unknown) => {
  port.postMessage({ type: 'error', error: toWorkerError(err) } satisfies WorkerMessage);
});
