import { join } from 'node:path';
import type { DataChange } from '../app-context.js';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { packageRoot } from '../paths.js';
import type { DocumentImportCounts } from '../export/export.js';
import type { ImportResult } from './types.js';
import type { ParseOutcome, ParseProgress, ParseRequest } from './parse.js';
import { ImportCancelledError } from './types.js';
import { fromWorkerError, type ImportWorkerData, type MainMessage, type WorkerMessage, type WriteRequest } from './worker-protocol.js';

const FROM_SOURCE = import.meta.url.endsWith('.ts');
/**
 * The worker's module: beside this one when running from source (tests, tsx); in the build, found
 * from the package root, since this code may run from the CLI's single-file bundle (see
 * server/cli/bundle.mjs) rather than from its own file beside worker.js.
 */
function workerUrl(): URL {
  return FROM_SOURCE ? new URL('./worker.ts', import.meta.url) : pathToFileURL(join(packageRoot(), 'build', 'server', 'imports', 'worker.js'));
}

/**
 * Running from source, a worker does not inherit tsx's loader: a small bootstrap registers it in
 * the worker before importing the TypeScript module. The built app starts worker.js directly.
 */
function startWorker(workerData: ImportWorkerData, resourceLimits: ResourceLimits | undefined): Worker {
  const options = { workerData, ...(resourceLimits ? { resourceLimits } : {}) };
  if (!FROM_SOURCE) return new Worker(workerUrl(), options);
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(workerUrl().href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * A parse keeps ~20 MB of records for ten years of meals and sleep, but V8 lets a heap grow far
 * past its live data when it can: a tight heap makes it collect early, which keeps a 1 GB import
 * under 200 MB resident. An export with far more food records than that is parsed again with
 * room to spare rather than failed.
 */
const TIGHT_HEAP: ResourceLimits = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 12 };
const ROOMY_HEAP: ResourceLimits = { maxOldGenerationSizeMb: 4096 };

/**
 * Parses files in a worker thread: a multi-gigabyte export keeps a core busy for a minute, and
 * the HTTP API must keep answering meanwhile. Rejects with ImportInputError for bad input.
 */
export function parseInWorker(
  request: ParseRequest,
  onProgress: (p: ParseProgress) => void = () => {},
  signal?: AbortSignal,
): Promise<ParseOutcome> {
  return withHeapToSpare((limits) => runOnce<ParseOutcome>({ parse: request }, undefined, onProgress, limits, signal));
}

/** Runs a worker with the tight heap, and once more with room to spare if that ran out of memory. */
async function withHeapToSpare<T>(run: (limits: ResourceLimits) => Promise<T>): Promise<T> {
  try {
    return await run(TIGHT_HEAP);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_WORKER_OUT_OF_MEMORY') throw err;
    return run(ROOMY_HEAP);
  }
}

/**
 * How the caller makes room for the worker's writes (R: what the write returns). The worker
 * writes in short transactions; this thread's writers are held back during each (slice …
 * sliceDone) and write between them.
 */
export interface WriteTurn<R> {
  /**
   * The parse is done: resolves once no other import (or restore) can come between the worker's
   * transactions, with the time the import is written at, or with undefined to write nothing (the
   * import was cancelled meanwhile).
   */
  begin(): Promise<number | undefined>;
  /** Resolves once this thread's writers are held back for the worker's next transaction. */
  slice(): Promise<void>;
  /** That transaction is over, having changed `change` (what derived data reads; see writeSlice). */
  sliceDone(change: DataChange): void;
  /**
   * The worker's last transaction is over (called once for each begin, after the worker stopped):
   * the import committed whole with `result`, or not (undefined: an error, or the worker died);
   * then what its earlier transactions committed must be removed. Settles before the import does.
   */
  end(result: R | undefined): Promise<void>;
}

/**
 * Parses and writes an import in a worker thread, the write on the worker's own connection to
 * `write.dbPath`, in `turn` with this thread's writers (see WriteTurn). A cancel before the write
 * starts writes nothing (ImportCancelledError); once the write has started it completes.
 */
export function importInWorker(
  request: ParseRequest,
  write: WriteRequest,
  turn: WriteTurn<ImportResult>,
  onProgress: (p: ParseProgress) => void = () => {},
  signal?: AbortSignal,
): Promise<ImportResult> {
  return withHeapToSpare((limits) => runOnce<ImportResult>({ parse: request, write }, turn, onProgress, limits, signal));
}

/**
 * Reads a Chyme export document (its JSON bytes, copied to the worker: a few milliseconds for
 * ten years) and writes it, in a worker thread: for ten years of records, the JSON parse, the
 * schema check and the write each take tenths of a second. Rejects with ImportDocumentInvalid
 * (nothing written) for a document that is not JSON or not an export.
 */
export function importDocumentInWorker(bytes: Uint8Array, write: WriteRequest, turn: WriteTurn<DocumentImportCounts>): Promise<DocumentImportCounts> {
  return runOnce<DocumentImportCounts>({ document: bytes, write }, turn, () => {}, ROOMY_HEAP, undefined);
}

/**
 * One worker, to its end. A cancel (signal aborted) while it parses stops it at once and rejects
 * with ImportCancelledError; while it writes, the cancel is too late and is ignored. The worker
 * writes one transaction each time it is told to ('write', then 'continue'), in this thread's
 * turn (see WriteTurn), until its last ('written').
 */
function runOnce<T>(
  data: ImportWorkerData,
  turn: WriteTurn<T> | undefined,
  onProgress: (p: ParseProgress) => void,
  limits: ResourceLimits,
  signal: AbortSignal | undefined,
): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ImportCancelledError());
    const worker = startWorker(data, limits);
    let settled = false;
    let writing = false;
    /** The write turn's begin, once asked for; it is ended once, after begin resolved. */
    let begun: Promise<number | undefined> | undefined;
    const cancel = () => {
      if (!writing) settle(undefined, () => reject(new ImportCancelledError()));
    };
    signal?.addEventListener('abort', cancel, { once: true });
    /** Ends the worker, then the write turn (committed with `result`, or not), then the import with `fn`. */
    const settle = (result: T | undefined, fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', cancel);
      // A worker that wrote has closed its connection; one that did not never wrote.
      void worker
        .terminate()
        .then(() => begun?.then(() => turn!.end(result), () => {}))
        .finally(fn);
    };
    /** This thread's writers held back, tells the worker to write its next transaction. */
    const nextSlice = (message: MainMessage) =>
      turn!.slice().then(
        () => {
          if (!settled) worker.postMessage(message);
        },
        (err: unknown) => settle(undefined, () => reject(err)),
      );
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'progress') onProgress({ bytesDone: m.bytesDone, bytesTotal: m.bytesTotal });
      else if (m.type === 'done') settle(undefined, () => resolve(m.outcome as T));
      else if (m.type === 'parsed') {
        begun = turn!.begin();
        begun.then(
          (nowMs) => {
            if (settled) return;
            if (nowMs === undefined || signal?.aborted) {
              worker.postMessage({ type: 'cancel' } satisfies MainMessage);
              return settle(undefined, () => reject(new ImportCancelledError()));
            }
            writing = true;
            void nextSlice({ type: 'write', nowMs });
          },
          (err: unknown) => settle(undefined, () => reject(err)),
        );
      } else if (m.type === 'committed') {
        turn!.sliceDone(m.change);
        void nextSlice({ type: 'continue' });
      } else if (m.type === 'written') {
        turn!.sliceDone('everything');
        settle(m.result as T, () => resolve(m.result as T));
      } else settle(undefined, () => reject(fromWorkerError(m.error)));
    });
    worker.on('error', (err) => settle(undefined, () => reject(err)));
    worker.on('exit', (code) => settle(undefined, () => reject(new Error(`the import worker stopped (exit code ${code}) before it finished`))));
  });
}
