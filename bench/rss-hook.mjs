// Preloaded (`node --import`) by bench/sync-rss-probe.ts into the `chyme serve` it measures, never
// by the product: on SIGUSR2 it writes to $CHYME_RSS_HOOK_FILE what the process's memory is made of
// from the inside (V8's heap spaces, external and array buffers, the size of every WebAssembly
// memory instantiated so far, i.e. Automerge's linear memory), which /proc cannot tell apart.
import { writeFileSync } from 'node:fs';
import { getHeapSpaceStatistics, getHeapStatistics, getHeapCodeStatistics } from 'node:v8';

const file = process.env.CHYME_RSS_HOOK_FILE;
const memories = [];
if (file) {
  const keep = (instance) => {
    for (const v of Object.values(instance.exports)) if (v instanceof WebAssembly.Memory) memories.push(v);
  };
  // Proxies, not subclasses: wasm-bindgen's glue checks `instance instanceof WebAssembly.Instance`
  // on what WebAssembly.instantiate returns, which a subclass would fail (and sync with it).
  WebAssembly.Instance = new Proxy(WebAssembly.Instance, {
    construct(target, args, newTarget) {
      const instance = Reflect.construct(target, args, newTarget);
      keep(instance);
      return instance;
    },
  });
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async (...args) => {
    const result = await instantiate(...args);
    keep(result.instance ?? result);
    return result;
  };
  process.on('SIGUSR2', () => {
    const mu = process.memoryUsage();
    const out = {
      memoryUsage: mu,
      heap: getHeapStatistics(),
      code: getHeapCodeStatistics(),
      spaces: getHeapSpaceStatistics().map((s) => ({ name: s.space_name, size: s.space_size, used: s.space_used_size, physical: s.physical_space_size })),
      wasmMemories: memories.map((m) => m.buffer.byteLength),
    };
    writeFileSync(file, JSON.stringify(out));
  });
}

// CHYME_RSS_HOOK_TRACE=MS: every MS ms a line on stderr (RSS, the brk heap, V8's malloced memory
// and its peak, V8's heap, wasm memory), to see when each grows (start-up, the pass, the load).
const traceMs = Number(process.env.CHYME_RSS_HOOK_TRACE ?? 0);
if (traceMs > 0) {
  const { readFileSync } = await import('node:fs');
  const t0 = Date.now();
  const brk = () => {
    for (const l of readFileSync('/proc/self/smaps', 'utf8').split(/\n(?=[0-9a-f]+-)/)) if (l.includes('[heap]')) return Number(/\nRss:\s+(\d+)/.exec(l)[1]) / 1024;
    return 0;
  };
  const M = (x) => (x / 1048576).toFixed(1);
  setInterval(() => {
    const h = getHeapStatistics();
    const mu = process.memoryUsage();
    process.stderr.write(`rsshook t=${Date.now() - t0} rss ${M(mu.rss)} brk ${brk().toFixed(1)} malloced ${M(h.malloced_memory)} peak ${M(h.peak_malloced_memory)} heapTotal ${M(mu.heapTotal)} used ${M(mu.heapUsed)} ext ${M(mu.external)} wasm ${memories.map((m) => M(m.buffer.byteLength)).join('+')}\n`);
  }, traceMs).unref();
}
