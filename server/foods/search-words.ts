import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../paths.js';

/**
 * The words food search uses besides the table's names, held as data in
 * server/foods/data/search-words.json (see docs/foods.md, "Search"): synonyms (British and other
 * everyday names for the table's American words), staples (the food a plain name means), the
 * category heads of USDA names and the segments that do not change which food a name is.
 */
export const SEARCH_WORDS_FILE = join(packageRoot(), 'server', 'foods', 'data', 'search-words.json');

export interface SearchWords {
  /** A phrase (its words joined by one space) → the phrases, each as its words, it is also searched as. */
  synonyms: Map<string, string[][]>;
  /** The longest synonym key, in words. */
  longestSynonym: number;
  /** A phrase, its words sorted ("beef ground" for "ground beef"), → the NDB number of the food it means first. */
  staples: Map<string, string>;
  /** Leading name segments, lower case, that name a category ("alcoholic beverage", "cereals ready-to-eat"). */
  heads: Set<string>;
  /** Name segments, lower case, that do not change the food ("broilers or fryers"). */
  fillers: Set<string>;
}

export interface SearchWordsFile {
  synonyms: Record<string, string | string[]>;
  staples: Record<string, string>;
  heads: { list: string[] };
  fillers: { list: string[] };
}

/** Folds case and diacritics the way the FTS5 tokenizer (unicode61 remove_diacritics 2) does. */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

export function words(text: string): string[] {
  return fold(text).split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

/** A name segment as the index compares it with heads and fillers. */
export const segmentKey = (text: string): string => text.trim().toLowerCase();

export function parseSearchWords(file: SearchWordsFile): SearchWords {
  const synonyms = new Map<string, string[][]>();
  let longestSynonym = 0;
  for (const [key, value] of Object.entries(file.synonyms)) {
    if (key === 'about') continue;
    const keyWords = words(key);
    longestSynonym = Math.max(longestSynonym, keyWords.length);
    synonyms.set(keyWords.join(' '), (Array.isArray(value) ? value : [value]).map(words));
  }
  const staples = new Map<string, string>();
  for (const [key, ndb] of Object.entries(file.staples)) if (key !== 'about') staples.set(words(key).sort().join(' '), ndb);
  return {
    synonyms,
    longestSynonym,
    staples,
    heads: new Set(file.heads.list.map(segmentKey)),
    fillers: new Set(file.fillers.list.map(segmentKey)),
  };
}

let shipped: SearchWords | undefined;

/** The phone's worker bundles the same file (it has no file system) and hands it over here. */
export function provideSearchWords(file: SearchWordsFile): void {
  shipped = parseSearchWords(file);
}

/** The shipped search words, read once. */
export function searchWords(): SearchWords {
  shipped ??= parseSearchWords(JSON.parse(readFileSync(SEARCH_WORDS_FILE, 'utf8')) as SearchWordsFile);
  return shipped;
}
