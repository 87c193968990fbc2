/**
 * Compares two V8 heap snapshots (.heapsnapshot files, e.g. the soak's SOAK_HEAP_SNAPSHOTS) the way
 * DevTools' "Comparison" view does: live objects grouped by constructor (strings, arrays, code and
 * V8's internals by kind), with the count and self size of each group in both snapshots and the
 * growth between them, largest growth first.
 *
 * Usage: node --import tsx bench/heap-compare.ts BEFORE.heapsnapshot AFTER.heapsnapshot [ROWS]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

interface Group {
  count: number;
  bytes: number;
}

/** Types whose name is the constructor (or function) that made them; the rest group by type alone. */
const NAMED_TYPES = new Set(['object', 'closure', 'regexp', 'native']);

export function groupByConstructor(path: string): { groups: Map<string, Group>; total: number } {
  const heap = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const groups = new Map<string, Group>();
  let total = 0;
  for (let i = 0; i < heap.nodes.length; i += width) {
    const type = types[heap.nodes[i + typeAt]!]!;
    const bytes = heap.nodes[i + sizeAt]!;
    const key = NAMED_TYPES.has(type) ? `${heap.strings[heap.nodes[i + nameAt]!]} (${type})` : `(${type})`;
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += bytes;
    groups.set(key, group);
    total += bytes;
  }
  return { groups, total };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [beforePath, afterPath, rowsArg] = process.argv.slice(2);
  if (!beforePath || !afterPath) {
    console.error('usage: node --import tsx bench/heap-compare.ts BEFORE.heapsnapshot AFTER.heapsnapshot [ROWS]');
    process.exit(2);
  }
  const before = groupByConstructor(beforePath);
  const after = groupByConstructor(afterPath);
  const keys = new Set([...before.groups.keys(), ...after.groups.keys()]);
  const rows = [...keys]
    .map((key) => {
      const b = before.groups.get(key) ?? { count: 0, bytes: 0 };
      const a = after.groups.get(key) ?? { count: 0, bytes: 0 };
      return { key, b, a, growth: a.bytes - b.bytes };
    })
    .sort((x, y) => y.growth - x.growth)
    .slice(0, Number(rowsArg ?? 25));
  const mb = (n: number) => (n / 1024 / 1024).toFixed(2);
  console.log(`live heap: ${mb(before.total)} MB → ${mb(after.total)} MB (${mb(after.total - before.total)} MB)`);
  console.log('| constructor | count before | count after | MB before | MB after | growth MB |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const r of rows) console.log(`| ${r.key.replace(/\|/g, '\\|')} | ${r.b.count} | ${r.a.count} | ${mb(r.b.bytes)} | ${mb(r.a.bytes)} | ${mb(r.growth)} |`);
}
