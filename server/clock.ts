import { readFileSync, statSync } from 'node:fs';

/**
 * The service's only source of "now". Everything time-dependent (the engine, the scheduler, retry
 * timing, key last-used stamps) asks a Clock, so tests move time instead of sleeping.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests set and advance by hand. */
export class ManualClock implements Clock {
  constructor(private current: number) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * A clock read from a file holding epoch milliseconds, for end-to-end tests of a child process
 * (`CHYME_TEST_CLOCK_FILE`). Between rewrites of the file, time flows at the normal rate from the
 * written instant, so timeouts and retries still behave. A rewrite with the same instant sets the
 * clock back to it (the file's modification time tells it apart): a test that sets the time again
 * just before it reads the page means that instant, not the one it set a minute before.
 */
export class FileClock implements Clock {
  private base = 0;
  private readAt = 0;
  private raw = '';
  constructor(private readonly path: string) {
    this.refresh();
  }
  private refresh(): void {
    const written = statSync(this.path).mtimeMs;
    const text = readFileSync(this.path, 'utf8').trim();
    const raw = `${written} ${text}`;
    if (raw !== this.raw) {
      const ms = Number(text);
      if (text === '' || !Number.isFinite(ms)) throw new Error(`clock file ${this.path} does not hold epoch milliseconds`);
      this.raw = raw;
      this.base = ms;
      this.readAt = Date.now();
    }
  }
  now(): number {
    try {
      this.refresh();
    } catch {
      // A half-written file keeps the last good reading.
    }
    return this.base + (Date.now() - this.readAt);
  }
}
