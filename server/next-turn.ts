/**
 * Resolves once what waits on the thread (requests, acknowledgements, messages) has had its turn:
 * the pause between two slices of long work. setImmediate is Node's; a browser worker (the phone)
 * takes the next task with setTimeout.
 */
export const nextTurn = (): Promise<void> =>
  new Promise<void>((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));
