import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../paths.js';
import type { ChangeInput, ChangeOutput, MergeInput, MergeOutput } from './merge-doc.js';
import type { DocMerger } from './merger.js';

/** What is asked of the worker (merge-worker.ts): a merge (merge-doc.ts's mergeDoc) or a drain's change (changeDoc). */
export type MergeRequest = { id: number; merge: MergeInput; change?: undefined } | { id: number; change: ChangeInput; merge?: undefined };
export type MergeReply = { id: number; output: MergeOutput | ChangeOutput; error?: undefined } | { id: number; error: string; output?: undefined };

/** The worker ends after this long without a merge: a service at rest does not keep a second Automerge in memory. */
const IDLE_MS = 15_000;

const FROM_SOURCE = import.meta.url.endsWith('.ts');

/**
 * The worker's module: beside this one from source (tests through tsx, where a worker does not
 * inherit tsx's loader: a bootstrap registers it first); in the build, found from the package root,
 * since this code may run from the CLI's single-file bundle (server/cli/bundle.mjs).
 */
function startWorker(): Worker {
  if (!FROM_SOURCE) return new Worker(pathToFileURL(join(packageRoot(), 'build', 'server', 'sync', 'merge-worker.js')));
  const url = new URL('./merge-worker.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(url)}); });`;
  return new Worker(bootstrap, { eval: true });
}

/**
 * Merges in a worker thread, started at the first merge and ended when idle. A worker that dies
 * fails the merges it held (the engine fetches those chunks again) and is started anew at the next.
 */
export function threadMerger(): DocMerger {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve: (o: MergeOutput | ChangeOutput) => void; reject: (e: Error) => void }>();
  let idleTimer: ReturnType<typeof setTimeout> | undefined;

  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  const stop = () => {
    const w = worker;
    worker = undefined;
    clearTimeout(idleTimer);
    failAll(new Error('the merge worker stopped'));
    return w ? w.terminate().then(() => undefined) : Promise.resolve();
  };
  const ensure = (): Worker => {
    if (worker) return worker;
    const w = startWorker();
    w.on('message', (reply: MergeReply) => {
      const waiter = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (reply.error !== undefined) waiter?.reject(new Error(reply.error));
      else waiter?.resolve(reply.output);
      if (waiting.size === 0) {
        w.unref();
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => void stop(), IDLE_MS).unref();
      }
    });
    const gone = (err: Error) => {
      if (worker !== w) return;
      worker = undefined;
      failAll(err);
    };
    w.on('error', gone);
    w.on('exit', (code) => gone(new Error(`the merge worker exited with ${code}`)));
    worker = w;
    return w;
  };

  const ask = (request: { merge: MergeInput } | { change: ChangeInput }): Promise<MergeOutput | ChangeOutput> => {
    const w = ensure();
    clearTimeout(idleTimer);
    // Held open while a merge is under way: a service that stops waits for the engine, not for this.
    w.ref();
    const id = ++nextId;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      w.postMessage({ id, ...request } as MergeRequest);
    });
  };

  return {
    merge: async (input) => ({ output: (await ask({ merge: input })) as MergeOutput }),
    change: async (input) => ({ output: (await ask({ change: input })) as ChangeOutput }),
    get warm() {
      return worker !== undefined;
    },
    close: stop,
  };
}
