/**
 * The WebAssembly memories of the phone's worker, by name: SQLite's (where its page cache and every
 * statement live) and Automerge's (where every loaded sync document lives), registered when their
 * modules start. They are not in the worker's JS heap, and not in what V8 reports as its ArrayBuffer
 * backing stores either (CDP `Runtime.getHeapUsage` leaves WebAssembly memories out; docs/phone.md,
 * "Benchmarks"), so the worker reports them itself (`memory`, protocol.ts). A WebAssembly memory
 * only grows: its size now is also its peak.
 */
const memories = new Map<string, () => number>();

/** `bytes` answers the memory's size now (a memory's buffer is replaced when it grows). */
export function registerWasmMemory(name: string, bytes: () => number): void {
  memories.set(name, bytes);
}

/** The size of each registered memory, in bytes. */
export function wasmMemoryBytes(): Record<string, number> {
  return Object.fromEntries([...memories].map(([name, bytes]) => [name, bytes()]));
}
