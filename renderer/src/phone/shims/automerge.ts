/**
 * `@automerge/automerge` in the phone's worker build: the package's "slim" entry with its wasm
 * loaded as a file of the build (served as application/wasm, compiled while it streams), instead
 * of the bundler entry (which needs a wasm-ESM plugin) or the base64 one (the 3.6 MB module
 * inlined into the script). Loaded only when sync starts: the engine is a dynamic import.
 */
import { initializeWasm } from '@automerge/automerge/slim';
import wasmUrl from '@automerge/automerge/automerge.wasm?url';
import { registerWasmMemory } from '../wasm-memory.js';

const compiled = await WebAssembly.compileStreaming(fetch(new URL(wasmUrl, import.meta.url).href));
// The package keeps its instance to itself, but its memory (every loaded document) belongs in the
// worker's memory report: the instantiation of this module, and only of it, is watched for it.
// wasm-bindgen's init instantiates a compiled module it is given as it is (the package's types
// list only bytes, a request or a URL).
const instantiate = WebAssembly.instantiate as (source: unknown, imports?: WebAssembly.Imports) => Promise<unknown>;
WebAssembly.instantiate = (async (source: unknown, imports?: WebAssembly.Imports) => {
  const result = await instantiate(source, imports);
  if (source === compiled) {
    const memory = (result as WebAssembly.Instance).exports.memory as WebAssembly.Memory;
    registerWasmMemory('automerge', () => memory.buffer.byteLength);
  }
  return result;
}) as typeof WebAssembly.instantiate;
try {
  await initializeWasm(compiled as unknown as Uint8Array);
} finally {
  WebAssembly.instantiate = instantiate as typeof WebAssembly.instantiate;
}

export * from '@automerge/automerge/slim';
