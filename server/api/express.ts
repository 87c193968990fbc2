/**
 * Express, with body-parser, imported on first use instead of at start: its module bodies
 * (body-parser, type-is, mime-types building its tables from mime-db, router) were the largest
 * share of `chyme serve`'s start after compiling (docs/performance.md, "Cold start"), and the first
 * requests of a client are plain /v1 reads that the dispatch table answers without Express. A
 * request that needs it waits for the import; the service starts it in the background once it is
 * answering (service.ts), so in practice none waits.
 */
import type { default as Express } from 'express';

export type ExpressModule = typeof Express;

let loading: Promise<ExpressModule> | undefined;

export function loadExpress(): Promise<ExpressModule> {
  return (loading ??= import('express').then((m) => m.default));
}
