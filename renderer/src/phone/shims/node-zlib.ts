/** `node:zlib` in the phone's worker build: the food table is unzipped with DecompressionStream before it is needed (core-worker.ts). */
export function gunzipSync(): never {
  throw new Error("gunzipSync is not available in the phone's worker");
}
