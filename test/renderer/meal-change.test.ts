/**
 * withMealChange: what a screen shows at once after a write, before its reload. A saved meal
 * replaces its old version, or leaves the list when it no longer belongs (an edit moved it to
 * another day); a deleted meal goes; the others stay as they were (the same objects, so their rows,
 * memo, do not render again).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Meal } from '../../renderer/src/api/types.js';
import { withMealChange } from '../../renderer/src/lib/meals.js';

const meal = (id: string, day: string, description = id) => ({ id, day, description }) as unknown as Meal;
const ids = (list: readonly Meal[]) => list.map((m) => `${m.id}:${m.description}`);
const today = (m: Meal) => m.day === '2026-11-30';

test('a created meal joins the list; one of another day does not', () => {
  const list = [meal('a', '2026-11-30')];
  assert.deepEqual(ids(withMealChange(list, { saved: [meal('b', '2026-11-30')] }, today)), ['b:b', 'a:a']);
  assert.deepEqual(ids(withMealChange(list, { saved: [meal('c', '2026-11-29')] }, today)), ['a:a']);
});

test('an edited meal replaces its old version, once; moved to a day not listed, it leaves', () => {
  const list = [meal('a', '2026-11-30'), meal('b', '2026-11-30')];
  assert.deepEqual(ids(withMealChange(list, { saved: [meal('a', '2026-11-30', 'edited')] }, today)), ['a:edited', 'b:b']);
  assert.deepEqual(ids(withMealChange(list, { saved: [meal('a', '2026-11-28')] }, today)), ['b:b']);
});

test('deleted meals go; the others are the same objects', () => {
  const list = [meal('a', '2026-11-30'), meal('b', '2026-11-30'), meal('c', '2026-11-30')];
  const after = withMealChange(list, { deleted: ['a', 'c', 'not-listed'] }, today);
  assert.deepEqual(ids(after), ['b:b']);
  assert.equal(after[0], list[1]);
  assert.deepEqual(ids(withMealChange(list, {}, today)), ids(list));
});
