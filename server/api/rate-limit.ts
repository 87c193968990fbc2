import { performance } from 'node:perf_hooks';

/** Per API key: 200 requests a second, bursts of 2,000 (`chyme serve --rate-limit` changes it). */
export const DEFAULT_RATE_LIMIT = { perSecond: 200, burst: 2000 } as const;

/**
 * A token bucket per principal. It guards the machine against a runaway local script; it runs on
 * real elapsed time (not the service clock) because it limits how fast requests really arrive.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly config: { perSecond: number; burst: number }) {}

  take(principalId: string): boolean {
    const now = performance.now();
    const bucket = this.buckets.get(principalId) ?? { tokens: this.config.burst, at: now };
    bucket.tokens = Math.min(this.config.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.config.perSecond);
    bucket.at = now;
    this.buckets.set(principalId, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
