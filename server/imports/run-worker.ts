import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { packageRoot } from '../paths.js';
import type { ParseOutcome, ParseProgress, ParseRequest } from './parse.js';
import { ImportCancelledError, ImportInputError } from './types.js';
import type { WorkerMessage } from './worker.js';

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
function startWorker(workerData: ParseRequest, resourceLimits: ResourceLimits | undefined): Worker {
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
export async function parseInWorker(
  request: ParseRequest,
  onProgress: (p: ParseProgress) => void = () => {},
  signal?: AbortSignal,
): Promise<ParseOutcome> {
  try {
    return await parseOnce(request, onProgress, TIGHT_HEAP, signal);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_WORKER_OUT_OF_MEMORY') throw err;
    return parseOnce(request, onProgress, ROOMY_HEAP, signal);
  }
}

/** A cancel (signal aborted) stops the worker at once and rejects with ImportCancelledError. */
function parseOnce(request: ParseRequest, onProgress: (p: ParseProgress) => void, limits: ResourceLimits, signal: AbortSignal | undefined): Promise<ParseOutcome> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ImportCancelledError());
    const worker = startWorker(request, limits);
    let settled = false;
    const cancel = () => settle(() => reject(new ImportCancelledError()));
    signal?.addEventListener('abort', cancel, { once: true });
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', cancel);
      fn();
      void worker.terminate();
    };
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'progress') onProgress({ bytesDone: m.bytesDone, bytesTotal: m.bytesTotal });
      else if (m.type === 'done') settle(() => resolve(m.outcome));
      else settle(() => reject(m.input ? new ImportInputError(m.message, m.param) : new Error(m.message)));
    });
    worker.on('error', (err) => settle(() => reject(err)));
    worker.on('exit', (code) => settle(() => reject(new Error(`the import worker stopped (exit code ${code}) before it finished`))));
  });
}
