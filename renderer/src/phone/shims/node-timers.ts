/**
 * Node's timer API where the service's sync engine needs it, in the phone's worker (imported for
 * its effect, before anything runs):
 *
 * - `setImmediate`, which browsers lack. A message on a channel runs as soon as the worker is idle,
 *   without setTimeout's clamp of nested timers to 4 ms (a join yields thousands of times).
 * - `unref()`/`ref()` on what setTimeout and setInterval return (the engine unrefs its timers so
 *   they never keep a Node process alive). A browser's timer id is a number; here it is a Number
 *   object with those two methods, which clearTimeout and clearInterval still take, since WebIDL
 *   converts their argument with valueOf.
 */
type Timer = number & { unref(): Timer; ref(): Timer; hasRef(): boolean };

const g = globalThis as unknown as Record<string, unknown>;

if (typeof g.setImmediate !== 'function') {
  const channel = new MessageChannel();
  const queue: Array<() => void> = [];
  channel.port1.onmessage = () => queue.shift()?.();
  g.setImmediate = (fn: (...args: unknown[]) => void, ...args: unknown[]) => {
    queue.push(() => fn(...args));
    channel.port2.postMessage(null);
  };
}

function nodeLike(original: (...args: never[]) => number): (...args: never[]) => Timer {
  return (...args) => {
    const timer = Object(original(...args)) as Timer;
    timer.unref = () => timer;
    timer.ref = () => timer;
    timer.hasRef = () => false;
    return timer;
  };
}

if (typeof (setTimeout(() => undefined, 0) as unknown as { unref?: unknown }).unref !== 'function') {
  g.setTimeout = nodeLike(setTimeout.bind(globalThis) as never);
  g.setInterval = nodeLike(setInterval.bind(globalThis) as never);
}

export {};
