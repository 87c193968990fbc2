import { parentPort, workerData } from 'node:worker_threads';
import { parseImport, type ParseRequest } from './parse.js';
import { ImportInputError } from './types.js';

/**
 * The worker-thread side of an import: parses the files off the thread that answers HTTP, and
 * posts back progress (at most every 16 MB) and the parsed records.
 */
export type WorkerMessage =
  | { type: 'progress'; bytesDone: number; bytesTotal: number }
  | { type: 'done'; outcome: Awaited<ReturnType<typeof parseImport>> }
  | { type: 'error'; message: string; input: boolean; param?: string };

const PROGRESS_STEP = 16 * 1024 ** 2;
const port = parentPort!;
let lastPosted = -Infinity;

parseImport(workerData as ParseRequest, (p) => {
  if (p.bytesDone - lastPosted >= PROGRESS_STEP || p.bytesDone === p.bytesTotal) {
    lastPosted = p.bytesDone;
    port.postMessage({ type: 'progress', ...p } satisfies WorkerMessage);
  }
}).then(
  (outcome) => port.postMessage({ type: 'done', outcome } satisfies WorkerMessage),
  (err: unknown) => {
    const input = err instanceof ImportInputError;
    port.postMessage({
      type: 'error',
      message: input ? err.message : String((err as Error)?.stack ?? err),
      input,
      ...(input ? { param: err.param } : {}),
    } satisfies WorkerMessage);
  },
);
