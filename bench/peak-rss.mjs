// Preloaded (`node --import`) into the short-lived CLI processes bench/sync.ts spawns: at exit it
// writes the process's peak resident memory (getrusage's maxRSS, KB) to $CHYME_BENCH_PEAK_FILE.
// A parent cannot read /proc/PID/status of a child that has exited, and sampling every 100 ms can
// miss a short peak just before the exit.
import { writeFileSync } from 'node:fs';

const file = process.env.CHYME_BENCH_PEAK_FILE;
if (file) {
  process.on('exit', () => {
    try {
      writeFileSync(file, String(process.resourceUsage().maxRSS));
    } catch {
      // The bench reports the sampled peak instead.
    }
  });
}
