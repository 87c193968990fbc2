// The renderer's webhook and API key forms take their lists from the service's own dependency-free
// modules (server/events/types.ts, server/auth/scopes.ts), which Vite bundles as they are. These
// checks keep what the forms offer equal to what the API accepts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SCOPE_DESCRIPTIONS, SCOPES, WEBHOOK_EVENTS } from '../../renderer/src/api/types.js';
import { EVENT_TYPES } from '../../server/events/types.js';

test('the webhook form offers exactly the events a subscription may list (all but test.ping)', () => {
  assert.deepEqual([...WEBHOOK_EVENTS], EVENT_TYPES.filter((t) => t !== 'test.ping'));
});

test('the API key form describes every scope the API checks, and nothing else', () => {
  assert.deepEqual(Object.keys(SCOPE_DESCRIPTIONS).sort(), [...SCOPES].sort());
  for (const s of SCOPES) assert.ok(SCOPE_DESCRIPTIONS[s].length > 0, s);
});
