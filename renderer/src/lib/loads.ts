/** What one load ended with. */
export type LoadOutcome<T> = { data: T } | { error: unknown };

/**
 * The loads of one resource for one set of inputs. A reload asked for while a load is in flight
 * does not abort it: it waits for it, and one more load follows (however many reloads were asked
 * for meanwhile). Aborting the load in flight at each reload, a screen whose service answers more
 * slowly than its events come (a busy machine, an import's burst of events) showed nothing at all
 * until the events paused; now every answer lands, and the last one is from after the last event.
 */
export class CoalescedLoads<T> {
  private inFlight: AbortController | undefined;
  private again = false;
  /** The load in flight started before a write whose answer is shown (`invalidate`). */
  private inFlightStale = false;
  private stopped = false;

  constructor(
    private readonly load: (signal: AbortSignal) => Promise<T>,
    /** `first`: the outcome of the first load (no data shown yet), not of a reload. */
    private readonly show: (outcome: LoadOutcome<T>, first: boolean) => void,
  ) {
    this.run(true);
  }

  reload(): void {
    if (this.stopped) return;
    if (this.inFlight) this.again = true;
    else this.run(false);
  }

  /**
   * What is shown is newer than the load in flight (a write's answer, shown at once): that load's
   * data is dropped rather than shown (it would take the write off the screen until the next
   * answer), and one more load follows, as for `reload`. The first load's data is always shown:
   * before it there was nothing on screen to amend.
   */
  invalidate(): void {
    if (this.inFlight) this.inFlightStale = true;
    this.reload();
  }

  /** The inputs changed, or the screen went away: the load in flight is aborted and nothing more is shown. */
  stop(): void {
    this.stopped = true;
    this.again = false;
    this.inFlight?.abort();
  }

  private run(first: boolean): void {
    const ctrl = new AbortController();
    this.inFlight = ctrl;
    this.inFlightStale = false;
    const settle = (outcome: LoadOutcome<T>) => {
      if (this.stopped) return;
      this.inFlight = undefined;
      if (!(this.inFlightStale && !first && 'data' in outcome)) this.show(outcome, first);
      if (this.again) {
        this.again = false;
        this.run(false);
      }
    };
    this.load(ctrl.signal).then(
      (data) => settle({ data }),
      (error: unknown) => {
        if (!ctrl.signal.aborted) settle({ error });
      },
    );
  }
}
