/**
 * `@automerge/automerge` in the phone's worker build: the package's "slim" entry with its wasm
 * loaded as a file of the build (served as application/wasm, compiled while it streams), instead
 * of the bundler entry (which needs a wasm-ESM plugin) or the base64 one (the 3.6 MB module
 * inlined into the script). Loaded only when sync starts: the engine is a dynamic import.
 */
import { initializeWasm } from '@automerge/automerge/slim';
import wasmUrl from '@automerge/automerge/automerge.wasm?url';

await initializeWasm(new URL(wasmUrl, import.meta.url).href);

export * from '@automerge/automerge/slim';
