/**
 * Work done in small synchronous steps (a generator that yields between them), so that the
 * service's thread can answer requests between slices of it: loading the food table and building
 * the search index at start. The warm-up advances a job slice by slice (inSlices); a request that
 * needs the result before then finishes the same job at once (finish), as it did before there was
 * a warm-up. No step holds a transaction open across a yield.
 */
import { nextTurn, SLICE_MS } from '../next-turn.js';

/** How a job is paced: the slice length and how to wait for the next turn (tests inject both). */
export interface Pace {
  sliceMs?: number;
  /** Resolves once the requests waiting have had their turn (default: setImmediate). */
  nextTurn?: () => Promise<void>;
  /** Stops between slices (the service stopping): the job is left for whoever needs it next. */
  signal?: AbortSignal;
}

/** One run of a generator of steps that several callers may advance; it ends once, for all of them. */
export class SteppedJob<R> {
  private outcome: { value: R } | { error: unknown } | undefined;

  /** `ended` runs once the last step has run or a step has thrown (the owner forgets the job). */
  constructor(
    private readonly steps: Generator<void, R>,
    private readonly ended: () => void = () => undefined,
  ) {}

  get done(): boolean {
    return this.outcome !== undefined;
  }

  /** Runs the next step; true once the job has ended (a step that throws ends it, and rethrows). */
  step(): boolean {
    if (!this.outcome) {
      try {
        const next = this.steps.next();
        if (!next.done) return false;
        this.outcome = { value: next.value };
      } catch (error) {
        this.outcome = { error };
      }
      this.ended();
    }
    if ('error' in this.outcome) throw this.outcome.error;
    return true;
  }

  /** Runs every step left now and gives the result. */
  finish(): R {
    while (!this.step());
    return (this.outcome as { value: R }).value;
  }

  /** Runs the steps in slices of about `sliceMs`, letting other work run between two; false when stopped. */
  async inSlices(pace: Pace = {}): Promise<boolean> {
    const sliceMs = pace.sliceMs ?? SLICE_MS;
    for (;;) {
      if (pace.signal?.aborted) return false;
      const until = performance.now() + sliceMs;
      // At least one step per slice, however loaded the machine.
      while (!this.step()) {
        if (performance.now() >= until) break;
      }
      if (this.done) return true;
      await (pace.nextTurn ?? nextTurn)();
    }
  }
}
