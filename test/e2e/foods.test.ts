/**
 * The meal form built from the food table (issue 8 §5, §6), in Debian's Chromium against a real
 * `chyme serve` with its real food table: a meal of three foods logged with the keyboard alone and
 * its stored macros checked against the foods through the API; save as a meal and log it again in
 * one click; favourites kept in localStorage moved to saved meals once; a custom food created from
 * the search box; axe-core (WCAG 2.2 AA and best practices, any impact) in light and dark, and screenshots
 * of the form under test-results/foods/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { activeAttr, axe, formatViolations, launchBrowser, openApp, pickFood, resultsDir, skipReason, startServer, todayUtcAt, until, type AppPage, type AxeViolation, type Server } from './harness.js';

const skip = skipReason();
/** Rolled oats as the table names them (SR28 "Oats", or SR24's long name). */
const OATS = /^(Oats|Cereals, oats, regular and quick)\b/;

interface FoodResource {
  id: string;
  name: string;
  source: string;
  nutrients: Record<'calories' | 'protein_g' | 'carbs_g' | 'fat_g' | 'fiber_g', number | null>;
  portions: { id: string; label: string; grams: number }[];
}
interface MealResource {
  id: string;
  description: string;
  meal_type: string;
  macros: { calories: number; protein_g: number; carbs_g: number; fat_g: number; fiber_g: number | null };
  calories_source: string;
  nutrient_sources: Record<string, string | null>;
  foods: { name: string; calories: number; food_id?: string; quantity?: number; unit?: string; grams?: number; protein_g?: number | null }[];
}
interface SavedMealResource {
  id: string;
  name: string;
  foods: MealResource['foods'];
  totals: { calories: number; protein_g: number | null; carbs_g: number | null; fat_g: number | null; fiber_g: number | null };
}

/** In the picked food's amount field: types the amount, optionally moves the unit, Enter adds it. */
async function amount(page: Page, quantity: string, unitKeys: string[] = []): Promise<void> {
  await until(async () => (await activeAttr(page, 'data-staged-amount')) !== null, 'the amount field to have focus');
  await page.keyboard.type(quantity);
  if (unitKeys.length) {
    await page.keyboard.press('Tab');
    for (const k of unitKeys) await page.keyboard.press(k);
  }
  await page.keyboard.press('Enter');
  await until(async () => (await activeAttr(page, 'role')) === 'combobox', 'focus back in the search box');
}

describe('meals from the food table, in the browser', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  let app: AppPage;
  let page: Page;
  const shots = resultsDir('foods');
  const nowMs = todayUtcAt(8, 5);
  const today = new Date(nowMs).toISOString().slice(0, 10);
  const mealsToday = async () =>
    (await server.api<{ data: MealResource[] }>('GET', `/v1/nutrition/meals?start_date=${today}&end_date=${today}`)).body.data;

  before(async () => {
    server = await startServer({ clockMs: nowMs, tz: 'UTC' });
    browser = await launchBrowser();
    app = await openApp(browser, server);
    page = app.page;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function openForm(): Promise<void> {
    await page.goto(`${server.url}/#/log`);
    await page.getByTestId('meal-form').waitFor();
  }

  // First, while nothing has been logged (a food the person logged would rank first on its own).
  test('Enter after a plain name picks the everyday food, not a look-alike: “whole milk”, “porridge”, “courgette”', async () => {
    for (const [query, want] of [
      ['whole milk', /^Milk, whole, 3\.25% milkfat/],
      ['porridge', /^Cereals, oats, regular and quick, unenriched, cooked with water/],
      ['courgette', /^Squash, summer, zucchini, includes skin, raw/],
    ] as const) {
      // A fresh form each time: nothing staged, an empty search box.
      await openForm();
      await page.reload();
      await page.getByTestId('food-search').focus();
      await pickFood(page, query, want, { first: true, shot: join(shots, `search-${query.replace(' ', '-')}.png`) });
      const staged = (await page.getByTestId('staged-food').getAttribute('aria-label')) ?? '';
      assert.match(staged.replace(/^Amount of /, ''), want, 'the food Enter picked waits for its amount');
    }
    await page.reload();
  });

  test('logs a meal of three foods with the keyboard alone, and the service stores their macros', async () => {
    await openForm();
    const form = page.getByTestId('meal-form');
    await form.getByLabel('Description').focus();
    await page.keyboard.type('Banana porridge');
    await page.keyboard.press('Tab');

    const banana = await pickFood(page, 'banana', /^Bananas, raw/);
    // One of the first portion is proposed; the amount is selected, so typing replaces it.
    assert.match(await page.getByTestId('staged-food').getByLabel('Unit').locator('option:checked').innerText(), /medium/);
    await amount(page, '1');
    const oats = await pickFood(page, 'oats', OATS);
    await amount(page, '60', ['Home']); // Home: the first unit, grams
    const milk = await pickFood(page, 'milk whole', /^Milk, whole/);
    await amount(page, '0.5');
    assert.equal(await page.getByTestId('food-entry').count(), 3);

    const entries = await Promise.all(
      (await page.getByTestId('food-entry').all()).map(async (row) => row.innerText()),
    );
    assert.match(entries[0]!, /Bananas, raw/);
    assert.match(entries[1]!, /60 g/);

    // Enter in the empty search box logs the meal.
    await page.keyboard.press('Enter');
    await page.getByTestId('toast').filter({ hasText: 'Logged' }).waitFor();

    const meal = await until(async () => (await mealsToday()).find((m) => m.description === 'Banana porridge'), 'the meal to be stored');
    assert.equal(meal.foods.length, 3);
    const foods = await Promise.all(meal.foods.map(async (f) => (await server.api<FoodResource>('GET', `/v1/foods/${f.food_id}`)).body));
    [banana, oats, milk].forEach((picked, i) => assert.ok(picked.startsWith(foods[i]!.name), `entry ${i} is the food picked: ${picked}`));
    // Grams as chosen: 1 medium banana (the portion proposed), 60 g of oats, half of the milk's portion.
    const portionOf = (i: number) => foods[i]!.portions.find((p) => p.id === meal.foods[i]!.unit);
    assert.match(portionOf(0)?.label ?? '', /medium/);
    assert.equal(meal.foods[1]!.unit, 'g');
    assert.equal(meal.foods[2]!.quantity, 0.5);
    const expectGrams = [portionOf(0)!.grams, 60, portionOf(2)!.grams / 2];
    meal.foods.forEach((f, i) => assert.ok(Math.abs(f.grams! - expectGrams[i]!) < 0.01, `grams of ${f.name}: ${f.grams} ≠ ${expectGrams[i]}`));
    // The meal's macros are the sums of the foods' nutrients for those grams.
    for (const k of ['calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g'] as const) {
      const expected = foods.reduce((s, f, i) => s + ((f.nutrients[k] ?? 0) * expectGrams[i]!) / 100, 0);
      const stored = meal.macros[k] ?? 0;
      assert.ok(Math.abs(stored - expected) <= (k === 'calories' ? 1 : 0.15), `${k}: stored ${stored}, foods add up to ${expected}`);
    }
    assert.ok(meal.macros.protein_g > 5 && meal.macros.fat_g > 2, 'a meal of foods carries protein and fat, not calories alone');
    assert.equal(await page.getByTestId('meal-totals').count(), 0, 'the form is empty again after logging');
  });

  test('edits a meal built from foods: an amount changed is weighed again, the rest keeps its numbers; re-logs it as logged', async () => {
    const before = (await mealsToday()).find((m) => m.description === 'Banana porridge')!;
    await openForm();
    await page.getByRole('button', { name: 'Edit Banana porridge' }).first().click();
    const form = page.getByTestId('meal-form');
    await form.getByRole('heading', { name: 'Edit meal' }).waitFor();
    assert.equal(await page.getByTestId('food-entry').count(), 3);
    // The sums of the foods are not typed values: the fields stay blank, the sums show as placeholders.
    assert.equal(await form.getByLabel('Protein (g)').inputValue(), '');
    const oatsName = before.foods[1]!.name;
    await form.getByLabel(`Amount of ${oatsName}`).fill('90');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Saved' }).waitFor();
    const after = await until(async () => {
      const m = (await mealsToday()).find((x) => x.id === before.id)!;
      return m.foods[1]!.grams === 90 ? m : undefined;
    }, 'the edited amount');
    assert.deepEqual(after.foods[0], before.foods[0], 'an entry not changed keeps the numbers it was logged with');
    assert.deepEqual(after.foods[2], before.foods[2]);
    const oatsKcal = (after.foods[1]!.calories * 60) / 90;
    assert.ok(Math.abs(before.foods[1]!.calories - oatsKcal) < 0.1, 'the oats were weighed again');
    const sum = after.foods.reduce((s, f) => s + f.calories, 0);
    assert.ok(Math.abs(after.macros.calories - sum) < 0.5, `the meal's calories follow its foods: ${after.macros.calories} vs ${sum}`);
    assert.ok(after.macros.protein_g > before.macros.protein_g, 'and so does its protein');
    assert.equal(after.calories_source, 'foods', 'the form did not type the sums in');
    assert.equal(after.nutrient_sources.protein_g, 'foods');
    assert.equal(after.nutrient_sources.fat_g, 'foods');

    // Log it again now from the list: the copy carries the same entries, foods and numbers.
    const count = (await mealsToday()).length;
    await page.getByRole('button', { name: 'Log Banana porridge again now' }).first().click();
    const copy = await until(async () => {
      const all = await mealsToday();
      return all.length > count ? all.find((m) => m.description === 'Banana porridge' && m.id !== before.id) : undefined;
    }, 'the re-logged meal');
    assert.deepEqual(copy.foods, after.foods);
    assert.equal(copy.macros.protein_g, after.macros.protein_g);
  });

  test('live totals follow the amounts while the meal is built', async () => {
    await openForm();
    await page.getByTestId('food-search').focus();
    // Before typing, the list holds the foods logged so far.
    const list = page.getByTestId('food-options');
    await until(async () => (await list.getAttribute('aria-label')) === 'Your recent and frequent foods' && (await list.getByRole('option').count()) >= 3, 'recent foods');
    const recent = await list.getByRole('option').allInnerTexts();
    assert.ok(recent.some((t) => /^Bananas, raw/.test(t)) && recent.some((t) => OATS.test(t)), recent.join(' | '));
    await pickFood(page, 'banana', /^Bananas, raw/);
    await amount(page, '200', ['Home']);
    const food = (await server.api<{ data: FoodResource[] }>('GET', '/v1/foods?query=banana&limit=10')).body.data.find((f) => /^Bananas, raw/.test(f.name))!;
    const kcal = () => page.getByTestId('meal-totals').locator('[data-nutrient="calories"] dd').innerText();
    assert.equal((await kcal()).replace(/\D/g, ''), String(Math.round(food.nutrients.calories! * 2)));
    // Change the amount in the list: the totals follow at once.
    await page.getByLabel(`Amount of ${food.name}`).fill('100');
    assert.equal((await kcal()).replace(/\D/g, ''), String(Math.round(food.nutrients.calories!)));
    await page.getByRole('button', { name: `Remove ${food.name}` }).click();
    assert.equal(await page.getByTestId('meal-totals').count(), 0);
  });

  test('saves the meal being built as a saved meal and logs it again in one click', async () => {
    await openForm();
    const form = page.getByTestId('meal-form');
    await form.getByLabel('Breakfast').check();
    await page.getByTestId('food-search').focus();
    await pickFood(page, 'banana', /^Bananas, raw/);
    await amount(page, '1');
    await pickFood(page, 'oats', OATS);
    await amount(page, '50', ['Home']);
    await form.getByRole('button', { name: 'Save as a meal…' }).click();
    await page.keyboard.type('Usual breakfast');
    await page.keyboard.press('Enter');
    await page.getByTestId('toast').filter({ hasText: 'Saved “Usual breakfast”' }).waitFor();

    const list = await server.api<{ data: SavedMealResource[] }>('GET', '/v1/nutrition/saved_meals');
    const saved = list.body.data.find((s) => s.name === 'Usual breakfast');
    assert.ok(saved, 'the saved meal is stored by the service');
    assert.equal(saved.foods.length, 2);
    assert.ok(saved.foods.every((f) => f.food_id), 'its entries reference the foods');

    const before = (await mealsToday()).length;
    await page.getByTestId('saved-meals').getByRole('button', { name: 'Log now: Usual breakfast' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Logged “Usual breakfast”' }).waitFor();
    const logged = await until(async () => {
      const all = await mealsToday();
      return all.length > before ? all.find((m) => m.foods.length === 2 && m.foods[0]!.food_id === saved.foods[0]!.food_id) : undefined;
    }, 'the saved meal logged');
    assert.equal(logged.meal_type, 'breakfast');
    assert.ok(Math.abs(logged.macros.calories - saved.totals.calories) <= 1, `calories ${logged.macros.calories} vs saved ${saved.totals.calories}`);
    assert.ok(Math.abs(logged.macros.protein_g - (saved.totals.protein_g ?? 0)) <= 0.15);
    // The form was left as it was: saving does not log.
    assert.equal(await page.getByTestId('food-entry').count(), 2);
  });

  test('moves favourites kept in this browser to saved meals, once', async () => {
    const favourite = {
      key: '["lentil soup",490,[["Lentil soup",330],["Rye bread",160]]]',
      meal_type: 'lunch',
      description: 'Lentil soup and rye bread',
      macros: { calories: 490, protein_g: 24, carbs_g: 70, fat_g: 9, fiber_g: 16 },
      micros: { sodium_mg: 900, caffeine_mg: 0 },
      foods: [
        { name: 'Lentil soup', calories: 330 },
        { name: 'Rye bread', calories: 160 },
      ],
    };
    await page.evaluate((f) => (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage.setItem('chyme.favourites', JSON.stringify([f])), favourite);
    await openForm();
    await page.reload();
    await page.getByTestId('saved-meals').getByRole('button', { name: 'Log now: Lentil soup and rye bread' }).waitFor();
    const left = await page.evaluate(() => (globalThis as unknown as { localStorage: { getItem(k: string): string | null } }).localStorage.getItem('chyme.favourites'));
    assert.equal(left, null, 'the favourites left localStorage');
    // A second load moves nothing again.
    await page.reload();
    await page.getByTestId('saved-meals').waitFor();
    const list = await server.api<{ data: SavedMealResource[] }>('GET', '/v1/nutrition/saved_meals');
    const moved = list.body.data.filter((s) => s.name === 'Lentil soup and rye bread');
    assert.equal(moved.length, 1);
    // Its protein, fat… were typed for the meal while its foods carry calories only: the saved
    // meal keeps every number in one entry named after the foods.
    assert.equal(moved[0]!.foods.length, 1);
    assert.equal(moved[0]!.foods[0]!.name, 'Lentil soup, Rye bread');
    assert.equal(moved[0]!.totals.calories, 490);
    assert.equal(moved[0]!.totals.protein_g, 24);
    assert.equal(moved[0]!.totals.fiber_g, 16);
  });

  test('creates a food of one’s own from the search box, logs it by its portion, edits and deletes it', async () => {
    await openForm();
    await page.getByTestId('food-search').focus();
    await page.keyboard.type('Oat bar of the house', { delay: 10 });
    const create = page.getByRole('option', { name: /Create “Oat bar of the house”/ });
    await create.waitFor();
    await create.click();
    const dialog = page.getByTestId('custom-food-dialog');
    await dialog.getByRole('heading', { name: 'A food of your own' }).waitFor();
    assert.equal(await dialog.getByLabel('Name').inputValue(), 'Oat bar of the house');
    await dialog.getByLabel('Brand (optional)').fill('Home bakery');
    await dialog.getByLabel('Per serving').check();
    await dialog.getByLabel('Serving size (g)').fill('40');
    await dialog.getByLabel('Serving name (optional)').fill('1 bar');
    await dialog.getByLabel('Calories (kcal)').fill('180');
    await dialog.getByLabel('Protein (g)').fill('4');
    await dialog.getByLabel('Fat (g)').fill('8');
    await dialog.getByRole('button', { name: 'Create food' }).click();
    // The new food is picked, one bar proposed, the amount focused.
    await until(async () => (await activeAttr(page, 'data-staged-amount')) !== null, 'the amount of the new food');
    assert.match(await page.getByTestId('staged-food').getByLabel('Unit').locator('option:checked').innerText(), /1 bar \(40 g\)/);
    await page.keyboard.press('Enter');
    const row = page.getByTestId('food-entry').filter({ hasText: 'Oat bar of the house' });
    assert.match(await row.innerText(), /180 kcal/);

    const found = await server.api<{ data: FoodResource[] }>('GET', `/v1/foods?query=${encodeURIComponent('oat bar house')}&limit=5`);
    const food = found.body.data.find((f) => f.name === 'Oat bar of the house');
    assert.ok(food, 'the custom food is searched with the rest');
    assert.equal(food.source, 'custom');
    assert.ok(Math.abs(food.nutrients.calories! - 450) < 0.01, 'per serving converted to per 100 g');
    assert.equal(food.nutrients.carbs_g, null, 'a nutrient left blank is unknown, not 0');
    await page.getByRole('button', { name: 'Remove Oat bar of the house' }).click();

    // Picked again, a food of one's own can be edited and deleted from where it is picked.
    await page.getByTestId('food-search').focus();
    await pickFood(page, 'oat bar house', /^Oat bar of the house/);
    const staged = page.getByTestId('staged-food');
    await staged.getByRole('button', { name: 'Edit food…' }).click();
    await dialog.getByRole('heading', { name: 'Edit Oat bar of the house' }).waitFor();
    assert.equal(await dialog.getByLabel('Calories (kcal)').inputValue(), '450', 'edited per 100 g');
    await dialog.getByLabel('Calories (kcal)').fill('500');
    await dialog.getByLabel('Carbs (g)').fill('60');
    await dialog.getByRole('button', { name: 'Save food' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.match(await page.getByTestId('staged-preview').innerText(), /Calories 200 kcal/, 'one bar of the edited food');
    const edited = await server.api<FoodResource>('GET', `/v1/foods/${food.id}`);
    assert.equal(edited.body.nutrients.calories, 500);
    assert.equal(edited.body.nutrients.carbs_g, 60);
    assert.deepEqual(edited.body.portions.map((p) => [p.label, p.grams]), [['1 bar', 40]]);

    await staged.getByRole('button', { name: 'Delete food' }).click();
    await staged.getByRole('button', { name: 'Delete Oat bar of the house' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Deleted “Oat bar of the house”' }).waitFor();
    assert.equal((await server.api('GET', `/v1/foods/${food.id}`)).status, 404);
    assert.equal(await page.getByTestId('staged-food').count(), 0);
  });

  for (const theme of ['light', 'dark'] as const) {
    test(`${theme}: the form with foods, the open list, the custom-food dialog: axe and screenshots`, async () => {
      const { page: p, context, problems } = await openApp(browser, server, { colorScheme: theme });
      const violations: { where: string; list: AxeViolation[] }[] = [];
      const check = async (where: string) => {
        const found = await axe(p);
        if (found.length) violations.push({ where, list: found });
      };
      try {
        await p.goto(`${server.url}/#/log`);
        const form = p.getByTestId('meal-form');
        await form.waitFor();
        await p.getByTestId('saved-meals').waitFor();
        await form.getByLabel('Description').fill('Banana porridge');
        await p.getByTestId('food-search').focus();
        await pickFood(p, 'banana', /^Bananas, raw/);
        await amount(p, '1');
        await pickFood(p, 'oats', OATS);
        await amount(p, '60', ['Home']);
        await form.getByRole('button', { name: 'Add food by calories' }).click();
        await form.getByLabel('Food 3', { exact: true }).fill('Honey');
        await form.getByLabel('Food 3 calories (kcal)').fill('60');
        await p.getByText('About the food table').click();
        // The list open on a query, a food picked and waiting for its amount.
        await p.getByTestId('food-search').focus();
        await p.keyboard.type('milk');
        await p.getByTestId('food-options').getByRole('option').first().waitFor();
        await p.waitForTimeout(250);
        await check('form with the list open');
        await p.screenshot({ path: join(shots, `meal-form-search-${theme}.png`), fullPage: true });
        await p.keyboard.press('Enter');
        await p.getByTestId('staged-food').waitFor();
        await check('form with a food waiting for its amount');
        await form.screenshot({ path: join(shots, `meal-form-${theme}.png`) });
        await p.keyboard.press('Escape');

        await p.getByRole('button', { name: 'New food of your own…' }).click();
        const dialog = p.getByTestId('custom-food-dialog');
        await dialog.getByLabel('Per serving').check();
        await dialog.getByRole('button', { name: 'Add a portion' }).click();
        await dialog.getByRole('button', { name: 'Create food' }).click();
        await dialog.locator('.field__error').first().waitFor();
        await check('custom-food dialog with errors');
        await p.screenshot({ path: join(shots, `custom-food-${theme}.png`) });
        await p.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached' });
        assert.deepEqual(problems, [], 'no console errors or CSP violations');
      } finally {
        await context.close();
      }
      assert.equal(violations.length, 0, violations.map((v) => `${v.where}:\n${formatViolations(v.list)}`).join('\n\n'));
    });
  }

  test('no console errors or CSP violations', () => {
    assert.deepEqual(app.problems, []);
  });
});
