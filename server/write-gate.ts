/**
 * Keeps the service's own writers away from SQLite's write lock while another connection holds it
 * for long: an import writes its thousands of rows from its worker thread, on a connection of its
 * own, in one transaction of up to a second or so.
 *
 * Why a gate: a write on this thread that met that lock would wait in SQLite's busy handler, which
 * sleeps synchronously, so the whole API would stop answering until the import committed. Instead
 * the API holds back requests that may write (anything but GET, HEAD and OPTIONS) and the
 * background writers (the webhook dispatcher, the digestion scheduler) skip their turn until the
 * gate opens; reads go on, seeing the database as it was before the import (WAL). A writer the gate
 * does not know of is still correct, only slow: it waits in the busy handler as before.
 *
 * Nothing on this thread holds a transaction across an `await`, so when a holder's acquire()
 * resolves, no write of this connection is under way.
 */
export class WriteGate {
  private holder: Promise<void> | undefined;
  private opened: (() => void) | undefined;

  /** True while another connection is (or is about to be) writing for a holder. */
  get closed(): boolean {
    return this.holder !== undefined;
  }

  /** Resolves once the gate is open (at once when it is); check `closed` first to skip the promise. */
  async open(): Promise<void> {
    // Another holder may take the gate between one opening and this continuation.
    while (this.holder) await this.holder;
  }

  /**
   * Closes the gate for the caller alone (holders take turns) and resolves with the function that
   * opens it again. Call that exactly once, after the other connection's transaction has ended.
   */
  async acquire(): Promise<() => void> {
    // The check and the taking run in one continuation, so two waiters cannot both take it.
    while (this.holder) await this.holder;
    this.holder = new Promise<void>((resolve) => (this.opened = resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const opened = this.opened!;
      this.holder = undefined;
      this.opened = undefined;
      opened();
    };
  }
}
