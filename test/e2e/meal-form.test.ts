/**
 * The meal form stores what the person did (issue 19 items 1–5 and 14), in Debian's Chromium
 * against a real `chyme serve` in Europe/Berlin, the service's and the browser's clocks set to
 * 25 Oct 2026, the day Berlin's clocks go back:
 * - an untouched "When" is the moment of submitting, and the meal type follows it, after the form
 *   has been open for minutes or the clocks have moved on by hours;
 * - an amount typed with its unit ("2 slices", "2 large") logs that amount of that unit whether it
 *   is typed fast, at ~120 ms a key or with pauses;
 * - an edit sends only the fields changed: the instant and offset, `inferred_time` and typed
 *   numbers stay as they were; a cleared Calories field hands calories back to the foods;
 * - a save over someone else's change (two tabs) is refused and shown, and Reload keeps both;
 * - a wall time the clocks repeat or skip is picked by the person, and an edit keeps it.
 * Screenshots under test-results/meal-form/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page, Request } from 'playwright-core';
import { activeAttr, axe, formatViolations, launchBrowser, openApp, pickFood, resultsDir, skipReason, startServer, until, type AppPage, type Server } from './harness.js';

const skip = skipReason();

interface MealResource {
  id: string;
  timestamp: string;
  day: string;
  meal_type: string;
  description: string;
  macros: { calories: number };
  calories_source: string;
  utc_offset_min: number;
  inferred_time: boolean;
  foods: { name: string; calories: number; food_id?: string; quantity?: number; unit?: string; grams?: number }[];
}

/** 07:40:18 UTC on the day Berlin leaves summer time (08:40 CET, breakfast). */
const OPENED_MS = Date.UTC(2026, 9, 25, 7, 40, 18);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('the meal form stores what the person did', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  let app: AppPage;
  let page: Page;
  const shots = resultsDir('meal-form');

  before(async () => {
    server = await startServer({ clockMs: OPENED_MS, tz: 'Europe/Berlin' });
    browser = await launchBrowser();
    app = await openApp(browser, server, { clockMs: OPENED_MS });
    page = app.page;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Moves the browser's clock and the service's together, as time passing does. */
  async function advance(ms: number): Promise<number> {
    const to = server.now() + ms;
    server.setClock(to);
    await app.context.clock.fastForward(ms);
    return to;
  }

  const allMeals = async () =>
    (await server.api<{ data: MealResource[] }>('GET', '/v1/nutrition/meals?start_date=2026-01-01&end_date=2026-12-31&limit=100')).body.data;
  const meal = (description: string) => until(async () => (await allMeals()).find((m) => m.description === description), `the meal “${description}”`);
  const getMeal = async (id: string) => (await server.api<MealResource>('GET', `/v1/nutrition/meals/${id}`)).body;

  /** The Log screen afresh (by way of another screen, so the form starts blank). */
  async function openLog(p: Page = page): Promise<Locator> {
    await p.goto(`${server.url}/#/import`);
    await p.getByTestId('past-imports').waitFor();
    await p.goto(`${server.url}/#/log`);
    const form = p.getByTestId('meal-form');
    await form.waitFor();
    return form;
  }

  /** Opens a listed meal in the form to edit it; resolves once the form has fetched its version. */
  async function edit(p: Page, description: string): Promise<Locator> {
    const form = await openLog(p);
    const fetched = p.waitForResponse((r) => r.request().method() === 'GET' && /\/v1\/nutrition\/meals\/meal_/.test(r.url()));
    await p.getByRole('button', { name: `Edit ${description}`, exact: true }).click();
    await until(async () => (await form.getByRole('heading', { level: 2 }).innerText()) === 'Edit meal', 'the form to edit the meal');
    await fetched;
    return form;
  }

  /** Saves the edit form and returns the body of the PATCH it sent. */
  async function save(p: Page, form: Locator): Promise<Record<string, unknown>> {
    const sent = p.waitForRequest((r: Request) => r.method() === 'PATCH');
    await form.getByRole('button', { name: 'Save changes' }).click();
    return (await sent).postDataJSON() as Record<string, unknown>;
  }

  const checkedType = async (form: Locator) => {
    for (const t of ['Breakfast', 'Lunch', 'Dinner', 'Snack']) if (await form.getByRole('radio', { name: t, exact: true }).isChecked()) return t;
    return null;
  };

  test('an untouched "When" is the moment the meal is logged, and the meal type follows it', async () => {
    const form = await openLog();
    assert.equal(await checkedType(form), 'Breakfast');
    // The form stays open two minutes and eleven seconds: 07:42:29, nothing touched.
    const first = await advance(2 * MINUTE + 11_000);
    await form.getByLabel('Description', { exact: true }).fill('Toast at 07:42');
    await form.getByRole('button', { name: 'Log meal', exact: true }).click();
    const toast = await meal('Toast at 07:42');
    const t1 = Date.parse(toast.timestamp);
    assert.ok(t1 >= first - 5000 && t1 < first + MINUTE, `stored at ${toast.timestamp}, submitted at ${new Date(first).toISOString()}`);
    assert.equal(toast.meal_type, 'breakfast');

    // Three hours on (the app stays open all day): 11:42 in Berlin, lunch, without a reload.
    const later = await advance(3 * HOUR);
    await until(async () => (await checkedType(form)) === 'Lunch', 'the meal type to follow the clock');
    assert.match(await form.getByLabel('When', { exact: true }).inputValue(), /^2026-10-25T11:4\d$/, 'the field shows the time it will log');
    await form.getByLabel('Description', { exact: true }).fill('Soup at 11:42');
    await form.getByRole('button', { name: 'Log meal', exact: true }).click();
    const soup = await meal('Soup at 11:42');
    const t2 = Date.parse(soup.timestamp);
    assert.ok(t2 >= later - 5000 && t2 < later + MINUTE, `stored at ${soup.timestamp}, submitted at ${new Date(later).toISOString()}`);
    assert.equal(soup.meal_type, 'lunch');
    await form.screenshot({ path: join(shots, 'when-follows-now.png') });
  });

  /** Picks a food, types its amount at `delay` ms a key and presses Enter; logs the meal; returns its one food. */
  async function logAmount(query: string, want: RegExp, typed: string, delay: number, description: string) {
    const form = await openLog();
    await form.getByRole('combobox').focus();
    await pickFood(page, query, want);
    await until(async () => (await activeAttr(page, 'data-staged-amount')) !== null, 'the amount field to have focus');
    await page.keyboard.type(typed, { delay });
    await page.keyboard.press('Enter');
    const row = form.getByTestId('food-entry');
    await row.waitFor();
    // The text stays as typed; the unit shown is the one it names.
    assert.equal(await row.getByRole('textbox').inputValue(), typed, `typed at ${delay} ms a key`);
    const unit = await row.getByRole('combobox').locator('option:checked').innerText();
    await form.getByLabel('Description', { exact: true }).fill(description);
    await form.getByRole('button', { name: 'Log meal', exact: true }).click();
    const logged = await meal(description);
    assert.equal(logged.foods.length, 1);
    return { unit, food: logged.foods[0]! };
  }

  for (const [who, delay] of [
    ['a fast typist', 0],
    ['a typist at 120 ms a key', 120],
    ['a typist who pauses at every key', 700],
  ] as const) {
    test(`an amount typed with its unit logs that amount of that unit: ${who}`, async () => {
      const bread = await logAmount('bread whole wheat', /^Bread, whole-wheat, commercially prepared/, '2 slices', delay, `Bread ${delay}`);
      assert.match(bread.unit, /^1 slice/);
      assert.deepEqual([bread.food.quantity, bread.food.grams], [2, 56], JSON.stringify(bread.food));
      const banana = await logAmount('banana', /^Bananas, raw/, '2 large', delay, `Banana ${delay}`);
      assert.match(banana.unit, /^1 large/);
      assert.deepEqual([banana.food.quantity, banana.food.grams], [2, 272], JSON.stringify(banana.food));
    });
  }

  test('an edit sends only the fields changed: the instant, its offset and an inferred time stay', async () => {
    const posted = await server.api<MealResource>('POST', '/v1/nutrition/meals', {
      timestamp: '2026-10-22T21:00:00-05:00',
      meal_type: 'dinner',
      description: 'Dinner in Boston',
      macros: { calories: 650 },
    });
    assert.equal(posted.body.day, '2026-10-22');
    // A meal imported without a time of day (inferred_time), through the export format.
    const doc = (await server.api<Record<string, unknown>>('GET', '/v1/export')).body;
    const imported = await server.api('POST', '/v1/import', {
      ...doc,
      meals: [{ id: 'meal_importedlunch1', timestamp: '2026-10-23T11:30:00Z', meal_type: 'lunch', description: 'Imported lunch', macros: { calories: 500 }, source: 'myfitnesspal', inferred_time: true }],
    });
    assert.ok(imported.status < 300, JSON.stringify(imported.body));

    let form = await edit(page, 'Dinner in Boston');
    await form.getByLabel('Description', { exact: true }).fill('Dinner in Boston, pasta');
    assert.deepEqual(await save(page, form), { description: 'Dinner in Boston, pasta' });
    const dinner = await until(async () => {
      const m = await getMeal(posted.body.id);
      return m.description === 'Dinner in Boston, pasta' && m;
    }, 'the edit saved');
    assert.deepEqual([dinner.timestamp, dinner.utc_offset_min, dinner.day], [posted.body.timestamp, -300, '2026-10-22']);

    form = await edit(page, 'Imported lunch');
    await form.getByLabel('Description', { exact: true }).fill('Imported lunch, soup');
    assert.deepEqual(await save(page, form), { description: 'Imported lunch, soup' });
    const lunch = await until(async () => {
      const m = await getMeal('meal_importedlunch1');
      return m.description === 'Imported lunch, soup' && m;
    }, 'the edit saved');
    assert.equal(lunch.inferred_time, true, 'a guessed time stays a guess');
    assert.equal(lunch.timestamp, '2026-10-23T11:30:00Z');
  });

  test('clearing a typed Calories field hands calories back to the foods', async () => {
    const posted = await server.api<MealResource>('POST', '/v1/nutrition/meals', {
      timestamp: '2026-10-24T08:00:00Z',
      meal_type: 'breakfast',
      description: 'Toast and jam',
      macros: { calories: 999 },
      foods: [{ name: 'Toast', calories: 130 }, { name: 'Jam', calories: 80 }],
    });
    const form = await edit(page, 'Toast and jam');
    const calories = form.getByLabel('Calories (kcal)', { exact: true });
    assert.equal(await calories.inputValue(), '999');
    await calories.fill('');
    assert.deepEqual(await save(page, form), { macros: { calories: null } });
    const after = await until(async () => {
      const m = await getMeal(posted.body.id);
      return m.macros.calories !== 999 && m;
    }, 'the calories cleared');
    assert.deepEqual([after.macros.calories, after.calories_source], [210, 'foods']);
  });

  test('two tabs: a save over the other tab\'s change is refused and shown, and Reload keeps both changes', async () => {
    const posted = await server.api<MealResource>('POST', '/v1/nutrition/meals', {
      timestamp: '2026-10-24T12:00:00Z',
      meal_type: 'lunch',
      description: 'Soup',
      macros: { calories: 400 },
    });
    const formA = await edit(page, 'Soup');
    const tabB = await app.context.newPage();
    try {
      const formB = await edit(tabB, 'Soup');
      await formB.getByLabel('Calories (kcal)', { exact: true }).fill('520');
      assert.deepEqual(await save(tabB, formB), { macros: { calories: 520 } });
      await until(async () => (await getMeal(posted.body.id)).macros.calories === 520, 'tab B saved');
    } finally {
      await tabB.close();
    }

    // Tab A still shows 400 and saves a new description.
    assert.equal(await formA.getByLabel('Calories (kcal)', { exact: true }).inputValue(), '400');
    await formA.getByLabel('Description', { exact: true }).fill('Tomato soup');
    assert.deepEqual(await save(page, formA), { description: 'Tomato soup' });
    const conflict = page.getByTestId('meal-conflict');
    await conflict.waitFor();
    assert.match(await conflict.innerText(), /Calories: 400 → 520 kcal/);
    await formA.screenshot({ path: join(shots, 'edit-conflict.png') });
    const violations = await axe(page);
    assert.equal(violations.length, 0, formatViolations(violations));
    const untouched = await getMeal(posted.body.id);
    assert.deepEqual([untouched.description, untouched.macros.calories], ['Soup', 520], 'nothing was overwritten');

    await conflict.getByRole('button', { name: 'Reload' }).click();
    assert.equal(await formA.getByLabel('Calories (kcal)', { exact: true }).inputValue(), '520', 'the other change is taken');
    assert.equal(await formA.getByLabel('Description', { exact: true }).inputValue(), 'Tomato soup', 'this change is kept');
    assert.deepEqual(await save(page, formA), { description: 'Tomato soup' });
    const both = await until(async () => {
      const m = await getMeal(posted.body.id);
      return m.description === 'Tomato soup' && m;
    }, 'the save after reloading');
    assert.equal(both.macros.calories, 520);
  });

  test('a repeated or skipped wall time is the person\'s pick, and an edit keeps it', async () => {
    const logAt = async (wall: string, description: string, pick?: string | RegExp) => {
      const form = await openLog();
      await form.getByLabel('When', { exact: true }).fill(wall);
      const choice = form.getByTestId('wall-time-choice');
      await choice.waitFor();
      if (pick) await choice.getByRole('radio', { name: pick }).check();
      await form.getByLabel('Description', { exact: true }).fill(description);
      await form.getByRole('button', { name: 'Log meal', exact: true }).click();
      return meal(description);
    };
    // 25 Oct: 02:30 comes twice, at +02:00 and then at +01:00.
    const firstChoice = await (async () => {
      const form = await openLog();
      await form.getByLabel('When', { exact: true }).fill('2026-10-25T02:30');
      const choice = form.getByTestId('wall-time-choice');
      await choice.waitFor();
      await form.screenshot({ path: join(shots, 'repeated-hour.png') });
      const violations = await axe(page);
      assert.equal(violations.length, 0, formatViolations(violations));
      return choice.getByRole('radio', { name: 'The first 02:30 (UTC+2)' }).isChecked();
    })();
    assert.ok(firstChoice, 'the first 02:30 is proposed');
    const first = await logAt('2026-10-25T02:30', 'Night snack, first 02:30');
    assert.deepEqual([first.timestamp, first.utc_offset_min], ['2026-10-25T00:30:00Z', 120]);
    const second = await logAt('2026-10-25T02:30', 'Night snack, second 02:30', 'The second 02:30 (UTC+1)');
    assert.deepEqual([second.timestamp, second.utc_offset_min], ['2026-10-25T01:30:00Z', 60]);
    // 29 Mar: 02:30 never happens; the time after the change is proposed, the one before can be picked.
    const after = await logAt('2026-03-29T02:30', 'Skipped hour, after');
    assert.equal(after.timestamp, '2026-03-29T01:30:00Z');
    const beforeChange = await logAt('2026-03-29T02:30', 'Skipped hour, before', /before the change/);
    assert.equal(beforeChange.timestamp, '2026-03-29T00:30:00Z');

    // Editing the first 02:30's description keeps it the first.
    const form = await edit(page, 'Night snack, first 02:30');
    assert.ok(await form.getByRole('radio', { name: 'The first 02:30 (UTC+2)' }).isChecked(), 'the form shows which 02:30 it was');
    await form.getByLabel('Description', { exact: true }).fill('Night snack');
    assert.deepEqual(await save(page, form), { description: 'Night snack' });
    const kept = await until(async () => {
      const m = await getMeal(first.id);
      return m.description === 'Night snack' && m;
    }, 'the edit saved');
    assert.equal(kept.timestamp, '2026-10-25T00:30:00Z');
  });

  test('a logged meal is in the screen\'s list with its note, before the list is loaded again', async () => {
    const form = await openLog();
    await page.getByTestId('meal-row').first().waitFor();
    // Every load of the list is held from here: the meal can only come from the POST's answer.
    const held: { continue(): Promise<void> }[] = [];
    let holding = true;
    const release = async () => {
      holding = false;
      for (const route of held.splice(0)) await route.continue();
    };
    const isList = (url: URL) => url.pathname === '/v1/nutrition/meals' && url.searchParams.has('start_date');
    await page.route(isList, (route) => void (holding ? held.push(route) : route.continue()));
    try {
      await form.getByLabel('Description', { exact: true }).fill('Tea with the note');
      await form.getByRole('button', { name: 'Log meal', exact: true }).click();
      await page.getByTestId('toast').filter({ hasText: 'Logged' }).waitFor();
      const cards = page.getByTestId('log').locator('section.card');
      const row = cards.last().getByTestId('meal-row').filter({ hasText: 'Tea with the note' });
      assert.equal(await row.count(), 1, 'the meal is listed when its note shows');
      await until(() => held.length > 0, 'the list to be loaded again after the meal');
      // The list as the service answers it replaces the meal shown from the POST: still one row.
      const reloaded = page.waitForResponse((r) => isList(new URL(r.url())));
      await release();
      await reloaded;
      await until(async () => (await row.count()) === 1, 'the meal listed once after the reload');
    } finally {
      await release();
      await page.unroute(isList);
    }
  });

  test('no console errors or CSP violations', () => {
    // A 412 answer is the conflict the form shows, not an error of the page.
    assert.deepEqual(app.problems.filter((p) => !/status of 412/.test(p)), []);
  });
});
