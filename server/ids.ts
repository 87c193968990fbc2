import { randomBytes } from 'node:crypto';

/** Resource id prefixes (CONTRACT §3). One place, so a prefix cannot drift between modules. */
export type IdPrefix = 'meal' | 'food' | 'smeal' | 'sleep' | 'whsub' | 'evt' | 'whdel' | 'key' | 'req' | 'ins' | 'imp';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Random base62 string of `length` characters (rejection sampling keeps it unbiased). */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A new opaque id such as `meal_3kT9xQ2pLm8vR1sN4wZc`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken(20)}`;
}
