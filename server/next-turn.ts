/**
 * Long work on the thread that answers requests (the food table's warm-up, the sync engine's drains
 * and projections, an import's writes) is cut into slices of about SLICE_MS, with a turn for
 * whatever waits (requests, acknowledgements, messages) between two: a request waits about this
 * long at most. A target, not a bound: one indivisible step may take longer on a busy machine.
 */
export const SLICE_MS = 25;

/**
 * Resolves once what waits on the thread has had its turn: the pause between two slices.
 * setImmediate is Node's; a browser worker (the phone) takes the next task with setTimeout.
 */
export const nextTurn = (): Promise<void> =>
  new Promise<void>((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));
