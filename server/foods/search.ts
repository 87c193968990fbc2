import type { Db } from '../db/connection.js';
import { foodVocabulary, getFoods, getFoodsBySeq, listFoodNames, listFoodUsage, matchFoodSeqs, type FoodRecord, type FoodUsage } from '../db/foods.js';
import { fold, searchWords, segmentKey, words, type SearchWords } from './search-words.js';
import { SteppedJob, type Pace } from './steps.js';
import { usdaFoodId } from './table.js';

export { fold, words };

/**
 * Food search: SQLite FTS5 finds the candidates (every query word as a prefix, in any order), and a
 * small ranker orders them. Plurals and typos are handled here, against the index's own vocabulary
 * (kept in memory, ~11k words): a word that starts no indexed word is replaced by the indexed
 * words within a small edit distance. Synonyms ("aubergine" → eggplant), staples ("milk" → whole milk)
 * and the category heads of USDA names are data (search-words.ts). See docs/foods.md "Search" for
 * the ranking rules.
 */

interface IndexedFood {
  seq: number;
  id: string;
  /**
   * Words of the name (then brand), each with the comma-separated segment of the name it sits in,
   * packed as `term * 256 + segment` (term: the word's place in SearchIndex.terms). Small integers
   * instead of a string and an object per word: the index of ~9,400 foods holds 2 MB, not 8 MB.
   */
  words: number[];
  nameLength: number;
  commas: number;
  /** USDA food groups that are prepared dishes, fast food, restaurant or baby food rank a little lower. */
  prepared: boolean;
  /** Whole foods (produce, meat, fish, dairy, grains, legumes…) rank a little higher. */
  basic: boolean;
  raw: boolean;
  /**
   * The name's words for telling whether it starts with the query: parenthesised asides and filler
   * segments left out, the first few segments only, each segment's words (term numbers) followed by
   * -1. `headEnd` is where the lead starts after a category head ("Alcoholic beverage, …"), else 0.
   */
  lead: number[];
  headEnd: number;
}

interface SearchIndex {
  vocabulary: string[];
  /** Every distinct word of the indexed names, once (what IndexedFood.words point to). */
  terms: string[];
  foods: Map<number, IndexedFood>;
  /** Staple phrases → the seq of the food each means (staples whose food is not in the table are left out). */
  staples: Map<string, number>;
}

const MAX_SEGMENT = 255;
const termOf = (index: SearchIndex, packed: number): string => index.terms[Math.floor(packed / 256)]!;
const segmentOf = (packed: number): number => packed % 256;

const indexes = new WeakMap<Db, SearchIndex>();

/** USDA food groups (first two digits of the NDB number) of dishes and processed foods rather than foods. */
const PREPARED_GROUPS = new Set(['03', '07', '21', '22', '25', '35', '36']);
/** USDA food groups of whole foods: dairy and egg, fats, poultry, fruit, pork, vegetables, nuts, beef, fish, legumes, lamb, grains. */
const BASIC_GROUPS = new Set(['01', '04', '05', '09', '10', '11', '12', '13', '15', '16', '17', '20']);

/** Gives each distinct word one number (and keeps one copy of its string) while an index is built. */
function termNumbering(terms: string[]): (word: string) => number {
  const numbers = new Map<string, number>();
  return (word) => {
    let n = numbers.get(word);
    if (n === undefined) {
      n = terms.length;
      terms.push(word);
      numbers.set(word, n);
    }
    return n;
  };
}

/** Segments of a name kept in IndexedFood.lead: enough for the longest query that starts a name. */
const LEAD_SEGMENTS = 4;
/** IndexedFood.words segment numbers of a category head's words and of parenthesised asides. */
const HEAD_SEGMENT = MAX_SEGMENT - 1;
const ASIDE_SEGMENT = MAX_SEGMENT;

/**
 * A name's comma-separated segments, parenthesised asides set apart ("Chickpeas (garbanzo beans,
 * bengal gram), mature seeds, raw": segments "Chickpeas", "mature seeds", "raw"; aside "garbanzo
 * beans, bengal gram"), so a comma inside parentheses does not start a segment.
 */
const ASIDE = /\(([^()]*)\)?/g;

function nameParts(name: string): { segments: string[]; asides: string } {
  if (!name.includes('(')) return { segments: name.split(','), asides: '' };
  let asides = '';
  const outside = name.replace(ASIDE, (_, inside: string) => {
    asides += ` ${inside}`;
    return ' ';
  });
  return { segments: outside.split(','), asides };
}

function indexFood(
  f: { seq: number; id: string; source: string; name: string; brand: string | null },
  termNumber: (word: string) => number,
  sw: SearchWords,
): IndexedFood {
  const { segments, asides } = nameParts(f.name);
  const segmentWords = segments.map((segment) => words(segment));
  const isHead = segments.length > 1 && sw.heads.has(segmentKey(segments[0]!));
  const fillers = segments.map((text) => sw.fillers.has(segmentKey(text)));
  const ws: number[] = [];
  let raw = false;
  const add = (word: string, segment: number): number => {
    const term = termNumber(word);
    ws.push(term * 256 + Math.min(segment, MAX_SEGMENT));
    if (word === 'raw') raw = true;
    return term;
  };
  // The lead: the head's words, then those of the first segments that are not fillers.
  const lead: number[] = [];
  if (isHead) lead.push(...segmentWords[0]!.map(termNumber), -1);
  // Fillers ("all commercial varieties") and asides do not make a name more specific: they do not
  // count in the length and the commas that rank shorter, more generic names first.
  let nameLength = -1;
  let kept = isHead ? 1 : 0;
  if (isHead) nameLength += segments[0]!.trim().length + 1;
  // The food's own segments first (the noun after a category head counts as the first word), then
  // the brand, the head ("Alcoholic beverage") and the asides: they match, but do not name the food.
  const first = isHead ? 1 : 0;
  for (let i = first; i < segmentWords.length; i++) {
    const inLead = segmentWords[i]!.length > 0 && !fillers[i] && kept < LEAD_SEGMENTS;
    for (const word of segmentWords[i]!) {
      const term = add(word, i - first);
      if (inLead) lead.push(term);
    }
    if (inLead) lead.push(-1);
    if (segmentWords[i]!.length > 0 && !fillers[i]) {
      kept++;
      nameLength += segments[i]!.trim().length + 1;
    }
  }
  if (f.brand) for (const word of words(f.brand)) add(word, segmentWords.length);
  if (isHead) for (const word of segmentWords[0]!) add(word, HEAD_SEGMENT);
  if (asides) for (const word of words(asides)) add(word, ASIDE_SEGMENT);
  const ndb = f.source === 'usda_sr' ? f.id.slice('food_usda_'.length) : '';
  return {
    seq: f.seq,
    id: f.id,
    words: ws,
    nameLength: Math.max(0, nameLength),
    commas: Math.max(0, kept - 1),
    prepared: PREPARED_GROUPS.has(ndb.slice(0, 2)),
    basic: BASIC_GROUPS.has(ndb.slice(0, 2)),
    raw,
    lead,
    headEnd: isHead ? segmentWords[0]!.length + 1 : 0,
  };
}

/** Foods indexed per step of a build: about a millisecond of work. */
const INDEX_FOODS_PER_STEP = 64;

/** Builds the in-memory index in steps (see steps.ts), from one reading of the foods. */
function* indexSteps(db: Db): Generator<void, SearchIndex> {
  const vocabulary = foodVocabulary(db).sort();
  const names = listFoodNames(db);
  // Read together, so that both are of the same foods; sorting and indexing can wait a turn.
  yield;
  const terms: string[] = [];
  const termNumber = termNumbering(terms);
  const sw = searchWords();
  const stapleIds = new Map<string, string[]>();
  for (const [phrase, ndb] of sw.staples) stapleIds.set(usdaFoodId(ndb), [...(stapleIds.get(usdaFoodId(ndb)) ?? []), phrase]);
  const staples = new Map<string, number>();
  const foods = new Map<number, IndexedFood>();
  for (let i = 0; i < names.length; i++) {
    const f = names[i]!;
    for (const phrase of stapleIds.get(f.id) ?? []) staples.set(phrase, f.seq);
    foods.set(f.seq, indexFood(f, termNumber, sw));
    if (i % INDEX_FOODS_PER_STEP === INDEX_FOODS_PER_STEP - 1) yield;
  }
  return { vocabulary, terms, foods, staples };
}

/** The build under way, which the warm-up advances and a search finishes; dropped when foods change. */
const builds = new WeakMap<Db, SteppedJob<SearchIndex>>();
/** How many times the foods of a database changed (invalidateFoodSearch): a build of before is stale. */
const generations = new WeakMap<Db, number>();

function indexBuild(db: Db): SteppedJob<SearchIndex> {
  let build = builds.get(db);
  if (!build) {
    const job: SteppedJob<SearchIndex> = new SteppedJob(indexSteps(db), () => {
      if (builds.get(db) === job) builds.delete(db);
    });
    builds.set(db, (build = job));
  }
  return build;
}

function searchIndex(db: Db): SearchIndex {
  let index = indexes.get(db);
  if (!index) {
    index = indexBuild(db).finish();
    indexes.set(db, index);
  }
  return index;
}

/** Builds the in-memory part of the index now rather than on the first search. */
export function prepareFoodSearch(db: Db): void {
  searchIndex(db);
}

/** prepareFoodSearch in slices, answering requests between two (a search meanwhile finishes the build). */
export async function prepareFoodSearchInSlices(db: Db, pace: Pace = {}): Promise<void> {
  if (indexes.has(db)) return;
  const generation = generations.get(db);
  const build = indexBuild(db);
  if (!(await build.inSlices(pace))) return;
  // Kept unless the foods changed meanwhile, or a search finished the build and kept it already.
  if (generations.get(db) === generation && !indexes.has(db)) indexes.set(db, build.finish());
}

/** Called after foods change (custom food written, table reloaded): the next search rebuilds. */
export function invalidateFoodSearch(db: Db): void {
  indexes.delete(db);
  builds.delete(db);
  generations.set(db, (generations.get(db) ?? 0) + 1);
}

/** First index in sorted `vocabulary` whose word is >= prefix. */
function lowerBound(vocabulary: string[], prefix: string): number {
  let lo = 0;
  let hi = vocabulary.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (vocabulary[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function startsSomeWord(vocabulary: string[], prefix: string): boolean {
  return vocabulary[lowerBound(vocabulary, prefix)]?.startsWith(prefix) ?? false;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), stopping past `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      cur.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > max) return max + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length]!;
}

/** Singular forms a query word may stand for: "berries" → "berry", "tomatoes" → "tomato", "eggs" → "egg". */
function singulars(word: string): string[] {
  const out: string[] = [];
  if (word.length > 4 && word.endsWith('ies')) out.push(`${word.slice(0, -3)}y`);
  if (word.length > 3 && word.endsWith('es')) out.push(word.slice(0, -2));
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) out.push(word.slice(0, -1));
  return out;
}

/** What one query word may match: indexed words starting with one of these (the word, its singulars, or its corrections). */
interface QueryTerm {
  prefixes: string[];
}

const MAX_CORRECTIONS = 6;

/** Indexed words within 1 edit (words up to 5 letters) or 2 (longer), whole or as the start of a longer word. */
function corrections(vocabulary: string[], word: string): string[] {
  if (word.length < 3) return [];
  const max = word.length <= 5 ? 1 : 2;
  const scored: Array<{ w: string; d: number }> = [];
  for (const w of vocabulary) {
    if (w.length + max < word.length) continue;
    // Typos rarely touch both of the first two letters: skip words sharing neither (or their swap).
    if (w[0] !== word[0] && w[1] !== word[1] && !(w[0] === word[1] && w[1] === word[0])) continue;
    const whole = editDistance(word, w, max);
    const start = w.length > word.length ? editDistance(word, w.slice(0, word.length), max) : max + 1;
    // A match of the word's start is worth a little less than of the whole word (still typing).
    const d = Math.min(whole, start + 0.5);
    if (d <= max) scored.push({ w, d });
  }
  // Only the closest words: "chiken" means chicken (1 edit), not chives (2).
  const best = Math.min(...scored.map((s) => s.d));
  return scored
    .filter((s) => s.d === best)
    .sort((a, b) => a.w.length - b.w.length)
    .slice(0, MAX_CORRECTIONS)
    .map((s) => s.w);
}

function queryTerms(vocabulary: string[], queryWords: string[]): QueryTerm[] | null {
  const terms: QueryTerm[] = [];
  for (const word of queryWords) {
    const prefixes = [word, ...singulars(word)].filter((p) => startsSomeWord(vocabulary, p));
    if (prefixes.length === 0) prefixes.push(...corrections(vocabulary, word));
    if (prefixes.length === 0) return null; // a word nothing resembles: no match
    terms.push({ prefixes });
  }
  return terms;
}

/** The word and its singular forms: how a query word is looked up among synonyms and staples. */
export const forms = (word: string): string[] => [word, ...singulars(word)];

/**
 * The value of `map` for `phrase` as typed or with any of its words in a singular form ("prawns"
 * finds "prawn"); with `anyOrder`, the map's keys have their words sorted and so are looked up.
 */
function lookUp<T>(map: Map<string, T>, phrase: string[], anyOrder = false): T | undefined {
  let keys = [''];
  for (const word of phrase) keys = keys.flatMap((k) => forms(word).map((f) => (k ? `${k} ${f}` : f)));
  for (const key of keys) {
    const found = map.get(anyOrder ? key.split(' ').sort().join(' ') : key);
    if (found !== undefined) return found;
  }
  return undefined;
}

const MAX_ALTERNATIVES = 8;

/** A synonym of several words whose last word is still being typed ("jacket pot", "semi sk"). */
function typedSynonym(sw: SearchWords, phrase: string[]): string[][] | undefined {
  const start = `${phrase.slice(0, -1).join(' ')} `;
  const last = phrase[phrase.length - 1]!;
  for (const [key, values] of sw.synonyms) {
    if (key.startsWith(start) && key.length > start.length + last.length && key.startsWith(last, start.length) && !key.includes(' ', start.length)) return values;
  }
  return undefined;
}

/**
 * The query as typed and as each synonym rewrites it ("jacket potato" → "potatoes baked flesh and
 * skin"), longest synonym first. A word that starts no indexed word and is the start of a synonym
 * ("courg") is read as that synonym while it is being typed, and so is a synonym of several words
 * whose last word is being typed ("jacket pot"); such a word, or one that is a whole synonym, is
 * not also corrected as a typo.
 */
function alternatives(vocabulary: string[], sw: SearchWords, queryWords: string[]): string[][] {
  let out: string[][] = [[]];
  for (let i = 0; i < queryWords.length; ) {
    let options: string[][] | undefined;
    let used = 1;
    for (let len = Math.min(sw.longestSynonym, queryWords.length - i); len >= 1 && !options; len--) {
      const phrase = queryWords.slice(i, i + len);
      const found = lookUp(sw.synonyms, phrase) ?? (len > 1 && i + len === queryWords.length ? typedSynonym(sw, phrase) : undefined);
      if (found) {
        options = found;
        used = len;
      }
    }
    const word = queryWords[i]!;
    const known = forms(word).some((f) => startsSomeWord(vocabulary, f));
    if (!options && !known && word.length >= 3 && i === queryWords.length - 1) {
      for (const [key, values] of sw.synonyms) if (!key.includes(' ') && key.startsWith(word)) (options ??= []).push(...values);
    }
    const typed = queryWords.slice(i, i + used);
    const choices = options ? (used > 1 || known ? [typed, ...options] : options) : [typed];
    out = out.flatMap((alt) => choices.map((c) => [...alt, ...c])).slice(0, MAX_ALTERNATIVES);
    i += used;
  }
  return out;
}

/** The FTS5 expression: every term, in any order; a term's forms OR'ed. Words are [\p{L}\p{N}]+, quoted. */
function matchExpression(terms: QueryTerm[]): string {
  return terms
    .map((t) => `(${t.prefixes.map((p) => `"${p}"*`).join(' OR ')})`)
    .join(' AND ');
}

const DAY_MS = 86_400_000;

/** Frequent and recent: uses, discounted by a week of age since the last one. */
export function frecency(usage: FoodUsage, nowMs: number): number {
  return usage.count / (1 + Math.max(0, nowMs - usage.lastUsedMs) / (7 * DAY_MS));
}

/** True when `word` is `form` or its plural ("egg"/"eggs", "tomato"/"tomatoes", "berry"/"berries"). */
function sameWord(word: string, form: string): boolean {
  const extra = word.length - form.length;
  if (extra === 0) return word === form;
  if (extra === 1) return word.endsWith('s') && word.startsWith(form);
  if (extra === 2) return word.endsWith('es') && word.startsWith(form);
  return false;
}

function textScore(index: SearchIndex, food: IndexedFood, terms: QueryTerm[]): number {
  let score = 0;
  // Bit i set when word i of the leading segment matched a term (names have few leading words).
  let matchedLead = 0;
  const words = food.words;
  for (const term of terms) {
    let best = 0;
    let bestAt = -1;
    for (let at = 0; at < words.length; at++) {
      const word = termOf(index, words[at]!);
      const segment = segmentOf(words[at]!);
      let exact = false;
      let prefix = false;
      for (const p of term.prefixes) {
        if (!word.startsWith(p)) {
          // "berry" is a form of "berries" without being its prefix.
          if (p.endsWith('y') && word === `${p.slice(0, -1)}ies`) exact = prefix = true;
          continue;
        }
        prefix = true;
        if (sameWord(word, p)) exact = true;
      }
      if (!prefix) continue;
      // The leading segment names the food ("Chicken, …, breast"): a match there counts most.
      let s = segment === 0 ? 6 : 4;
      if (exact) s += 3;
      if (at === 0) s += 4;
      if (s > best) {
        best = s;
        bestAt = segment === 0 ? at : -1;
      }
    }
    if (bestAt >= 0 && bestAt < 31) matchedLead |= 1 << bestAt;
    score += best;
  }
  // Words of the leading segment the query did not ask for make it another food ("Chicken breast tenders").
  for (let at = 0; at < words.length && segmentOf(words[at]!) === 0; at++) {
    if (!(matchedLead & (1 << at))) score -= 3;
  }
  if (food.raw) score += 3;
  if (food.basic) score += 2;
  if (food.prepared) score -= 4;
  return score - 0.5 * food.commas - 0.03 * food.nameLength;
}

/** One reading of the query: as typed, or rewritten by synonyms. */
interface Alternative {
  words: string[];
  terms: QueryTerm[];
  /** Its last word is the query's last word, which may still be being typed (a prefix). */
  typing: boolean;
  /** The seq of the staple food the phrase names ("milk"), if any. */
  staple: number | undefined;
  /** The seq of the one staple whose one-word name the phrase's one word is the start of ("chick"). */
  typedStaple: number | undefined;
}

/** A name that starts with the query's words (whole segments: "Milk, whole" for "whole milk"). */
const START_BONUS = 20;
/** The same, with the last word still being typed ("whole mil"). */
const TYPING_START_BONUS = 10;
/** The food a staple phrase names ("milk": whole milk) comes first, after the person's own foods. */
const STAPLE_BONUS = 40;
/** While a one-word staple is typed ("chick"), its food comes first among the names it starts. */
const TYPING_STAPLE_BONUS = 15;
/** Letters typed before a staple is guessed from its start ("chic", not "ch"). */
const TYPING_STAPLE_MIN = 4;

/** The one staple of one word that `words` (one word, being typed, at least 4 letters) is the start of. */
function typedStaple(index: SearchIndex, words: string[]): number | undefined {
  const word = words[0]!;
  if (words.length !== 1 || word.length < TYPING_STAPLE_MIN) return undefined;
  let found: number | undefined;
  for (const [key, seq] of index.staples) {
    if (key === word || key.includes(' ') || !key.startsWith(word)) continue;
    if (found !== undefined && found !== seq) return undefined; // two staples start so: no guess
    found = seq;
  }
  return found;
}

/** True when two words are one word, singular or plural ("egg"/"eggs", "berry"/"berries"). */
function sameFood(a: string, b: string): boolean {
  if (a === b || sameWord(a, b) || sameWord(b, a)) return true;
  const [long, short] = a.length > b.length ? [a, b] : [b, a];
  return long.endsWith('ies') && short.endsWith('y') && long.length === short.length + 2 && long.startsWith(short.slice(0, -1));
}

/**
 * START_BONUS when the name, or the name after its category head ("Alcoholic beverage, beer"),
 * starts with exactly the query's words, in any order and as whole segments: "Milk, whole, 3.25%
 * milkfat" starts with "whole milk", "Milk, buttermilk, fluid, whole" and "Chicken breast
 * tenders" do not. TYPING_START_BONUS when so with the last word a prefix; else 0. Word order
 * does not matter, as everywhere in search ("breast chicken" ranks as "chicken breast").
 */
function startScore(index: SearchIndex, food: IndexedFood, alt: Alternative): number {
  const n = alt.words.length;
  let best = 0;
  for (let pass = food.headEnd > 0 ? 2 : 1; pass > 0; pass--) {
    const from = pass === 2 ? food.headEnd : 0;
    // The start is whole segments, as many words as the query: find where they end (most names
    // fail here, without building anything).
    let count = 0;
    let end = -1;
    for (let at = from; at < food.lead.length && count <= n; at++) {
      if (food.lead[at] !== -1) count++;
      else if (count === n) {
        end = at;
        break;
      }
    }
    if (end === -1) continue;
    const lead: string[] = [];
    for (let at = from; at < end; at++) if (food.lead[at] !== -1) lead.push(index.terms[food.lead[at]!]!);
    best = Math.max(best, leadMatch(lead, alt));
  }
  return best;
}

/** Whether the lead words are the query's words: each query word one lead word of its own. */
function leadMatch(lead: string[], alt: Alternative): number {
  const used = lead.map(() => false);
  let typing = false;
  for (let i = 0; i < alt.words.length; i++) {
    const word = alt.words[i]!;
    let at = lead.findIndex((w, j) => !used[j] && sameFood(w, word));
    if (at === -1 && alt.typing && i === alt.words.length - 1) {
      at = lead.findIndex((w, j) => !used[j] && w.startsWith(word));
      typing = true;
    }
    if (at === -1) return 0;
    used[at] = true;
  }
  return typing ? TYPING_START_BONUS : START_BONUS;
}

export interface FoodSearchResult {
  food: FoodRecord;
  usage: FoodUsage | undefined;
}

/**
 * Ranked foods for `query` (as typed and as its synonyms rewrite it, each reading scored and the
 * best kept): the person's foods (by frecency) before the rest, then the staple the query names,
 * then names that start with the query, then by how well the name matches (in the leading segment,
 * whole words, the first word), raw and plain foods before dishes, shorter names first.
 */
export function searchFoods(db: Db, query: string, limit: number, nowMs: number): FoodSearchResult[] {
  const index = searchIndex(db);
  const queryWords = words(query).slice(0, 8);
  if (queryWords.length === 0) return recentFoods(db, limit, nowMs);
  const typedLast = queryWords[queryWords.length - 1]!;
  const alts = alternatives(index.vocabulary, searchWords(), queryWords).flatMap((altWords): Alternative[] => {
    const terms = queryTerms(index.vocabulary, altWords);
    if (!terms) return [];
    const typing = altWords[altWords.length - 1] === typedLast;
    return [{ words: altWords, terms, typing, staple: lookUp(index.staples, altWords, true), typedStaple: typing ? typedStaple(index, altWords) : undefined }];
  });
  if (alts.length === 0) return [];
  const usage = new Map(listFoodUsage(db).map((u) => [u.foodId, u]));
  // One-letter words match a third of the table through the FTS index; scanning the in-memory
  // names is cheaper for them and gives the same candidates.
  const candidates = alts.every((a) => a.terms.every((t) => t.prefixes.every((p) => p.length === 1)))
    ? [...index.foods.values()].filter((f) => alts.some((a) => a.terms.every((t) => f.words.some((w) => t.prefixes.some((p) => termOf(index, w).startsWith(p))))))
    : matchFoodSeqs(db, alts.map((a) => `(${matchExpression(a.terms)})`).join(' OR ')).flatMap((seq) => index.foods.get(seq) ?? []);
  // A staple is a candidate even when its name lacks the word ("oatmeal" is "Cereals, oats, …, cooked").
  for (const a of alts) {
    for (const seq of [a.staple, a.typedStaple]) {
      const staple = seq === undefined ? undefined : index.foods.get(seq);
      if (staple && !candidates.includes(staple)) candidates.push(staple);
    }
  }
  // Keep only the best `limit` (sorted insertion): no sort of thousands of candidates.
  const ranked: Array<{ f: IndexedFood; score: number }> = [];
  const before = (a: { f: IndexedFood; score: number }, b: { f: IndexedFood; score: number }) =>
    a.score > b.score || (a.score === b.score && (a.f.nameLength < b.f.nameLength || (a.f.nameLength === b.f.nameLength && a.f.seq < b.f.seq)));
  for (const f of candidates) {
    const u = usage.get(f.id);
    let score = -Infinity;
    for (const a of alts) {
      const staple = a.staple === f.seq ? STAPLE_BONUS : a.typedStaple === f.seq ? TYPING_STAPLE_BONUS : 0;
      score = Math.max(score, textScore(index, f, a.terms) + startScore(index, f, a) + staple);
    }
    const entry = { f, score: score + (u ? 1000 + Math.min(100, 10 * frecency(u, nowMs)) : 0) };
    if (ranked.length === limit && !before(entry, ranked[limit - 1]!)) continue;
    let at = ranked.length;
    while (at > 0 && before(entry, ranked[at - 1]!)) at--;
    ranked.splice(at, 0, entry);
    if (ranked.length > limit) ranked.pop();
  }
  const records = new Map(getFoodsBySeq(db, ranked.map((r) => r.f.seq)).map((f) => [f.seq, f]));
  return ranked.flatMap((r) => {
    const food = records.get(r.f.seq);
    return food ? [{ food, usage: usage.get(food.id) }] : [];
  });
}

/** The person's foods, most useful (frecency) first: what the meal form shows before typing. */
export function recentFoods(db: Db, limit: number, nowMs: number): FoodSearchResult[] {
  const usage = listFoodUsage(db)
    .sort((a, b) => frecency(b, nowMs) - frecency(a, nowMs) || b.lastUsedMs - a.lastUsedMs)
    .slice(0, limit * 2); // a used food may since have been deleted
  const records = new Map(getFoods(db, usage.map((u) => u.foodId)).map((f) => [f.id, f]));
  return usage
    .flatMap((u) => {
      const food = records.get(u.foodId);
      return food ? [{ food, usage: u }] : [];
    })
    .slice(0, limit);
}
