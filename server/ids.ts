/** Resource id prefixes (CONTRACT §3). One place, so a prefix cannot drift between modules. */
export type IdPrefix = 'meal' | 'food' | 'smeal' | 'sleep' | 'whsub' | 'evt' | 'whdel' | 'key' | 'req' | 'ins' | 'imp';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * Random bytes are drawn from a pool refilled 4 KiB at a time: one call into the system's CSPRNG
 * per ~100 ids instead of one per id (every request gets an id). Each byte is used once.
 */
// WebCrypto's getRandomValues (Node's global crypto too), so the phone's worker draws ids the same way.
const pool = new Uint8Array(4096);
let poolAt = pool.length;

function randomByte(): number {
  if (poolAt === pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/** Random base62 string of `length` characters (rejection sampling keeps it unbiased). */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

/** A new opaque id such as `meal_3kT9xQ2pLm8vR1sN4wZc`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken(20)}`;
}

/** Bytes as base62 (a digest as an id: deterministic ids such as event ids). */
export function base62(bytes: Uint8Array): string {
  let n = 0n;
  for (const byte of bytes) n = (n << 8n) | BigInt(byte);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out.padStart(1, '0');
}
