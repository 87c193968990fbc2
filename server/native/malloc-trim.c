/*
 * glibc's malloc, tuned for a long-running service and asked to give back what it holds free.
 *
 * Why: glibc keeps memory the program freed. A freed large block raises its mmap and trim
 * thresholds for the rest of the process (so later blocks come from the heap, and up to twice
 * that much free space at the heap's top is never returned), and each thread's arena keeps the
 * free chunks between live ones. In `chyme serve` with sync on that was 10-20 MB of resident
 * memory nothing used (docs/performance.md, "Sync"). JavaScript cannot reach mallopt or
 * malloc_trim, and the MALLOC_* environment variables are read only when a process starts.
 *
 * Exports tune() (fixed thresholds, at most two arenas for threads made from now on) and trim()
 * (malloc_trim(0): the free pages of every arena go back to the system). Node-API only, so the
 * same binary loads in Node and in Electron. Built on Linux with glibc alone (server/native/build.mjs);
 * elsewhere there is nothing to build and server/memory.ts does without.
 */
#include <malloc.h>
#include <node_api.h>

static napi_value tune(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value ok;
  int done = mallopt(M_MMAP_THRESHOLD, 128 * 1024) && mallopt(M_TRIM_THRESHOLD, 128 * 1024) && mallopt(M_ARENA_MAX, 2);
  napi_get_boolean(env, done, &ok);
  return ok;
}

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value released;
  napi_get_boolean(env, malloc_trim(0), &released);
  return released;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "tune", NAPI_AUTO_LENGTH, tune, NULL, &fn);
  napi_set_named_property(env, exports, "tune", fn);
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn);
  napi_set_named_property(env, exports, "trim", fn);
  return exports;
}
