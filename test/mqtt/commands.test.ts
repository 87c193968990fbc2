import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MEAL_TEXT_PATTERN, parseMealText } from '../../server/mqtt/commands.js';
import { MAX_MEAL_CALORIES } from '../../server/nutrition/meals.js';
import { prng } from '../helpers/random.js';

// Home Assistant checks the "Log a meal" text with the pattern in the browser (an <input pattern>,
// compiled with the v flag) and in Python; Chyme parses with it. What the pattern lets through,
// Chyme must log, and what Chyme refuses, the pattern must stop.
const browser = new RegExp(`^(?:${MEAL_TEXT_PATTERN})$`, 'v');
const accepted = (s: string) => typeof parseMealText(s) !== 'string';

test('the "Log a meal" pattern accepts exactly the texts Chyme logs', () => {
  for (const ok of ['Oat porridge, 350 kcal', 'Toast; 210', 'Apple 95kcal', 'Apple95', 'Pizza 2 slices, 900 KCAL', 'Water 0', `Feast, ${MAX_MEAL_CALORIES}`, 'Tea 2.5', `${'x'.repeat(200)} 5`]) {
    assert.ok(browser.test(ok) && accepted(ok), ok);
  }
  for (const bad of ['', '   ', '450', 'Cake, 99999 kcal', `Feast, ${MAX_MEAL_CALORIES + 1}`, 'Toast 123456', 'no calories here', `${'x'.repeat(201)} 5`, 'Toast -5', 'Toast 5 kcals', 'Toast-5']) {
    assert.ok(!browser.test(bad) && !accepted(bad), JSON.stringify(bad));
  }
  assert.deepEqual(parseMealText('Pizza 2 slices, 900 KCAL'), { description: 'Pizza 2 slices', calories: 900 });
  assert.deepEqual(parseMealText('  Apple95  '), { description: 'Apple', calories: 95 });
  // JSON is for scripts (mqtt.publish); the text box never sends it.
  assert.deepEqual(parseMealText('{"description": "Banana", "calories": 105}'), { description: 'Banana', calories: 105 });
});

test('on 20,000 random texts the pattern and Chyme agree', () => {
  const random = prng(28);
  const pieces = ['a', 'Toast', ' ', '  ', ',', ';', '.', '0', '1', '5', '9', '10000', '99999', 'kcal', 'KCal', '-', '\t', 'é', '{', '}'];
  const disagree: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    let s = '';
    const n = 1 + Math.floor(random() * 8);
    for (let j = 0; j < n; j++) s += pieces[Math.floor(random() * pieces.length)];
    if (s.trimStart().startsWith('{') && !browser.test(s)) continue; // JSON, for scripts
    if (browser.test(s) !== accepted(s)) disagree.push(JSON.stringify(s));
  }
  assert.deepEqual(disagree.slice(0, 10), []);
});
