// The renderer's webhook form and API key form take their lists from the service's own modules
// (server/events/event-types.ts, server/auth/scopes.ts: no imports, so Vite bundles them). These
// checks keep what the forms offer equal to what the API accepts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SCOPE_DESCRIPTIONS, SCOPES, WEBHOOK_EVENTS } from '../../renderer/src/api/types.js';
import { SCOPES as API_SCOPES } from '../../server/api/route.js';
import { EVENT_TYPES } from '../../server/events/bus.js';

test('the webhook form offers exactly the events a subscription may list (all but test.ping)', () => {
  assert.deepEqual([...WEBHOOK_EVENTS], EVENT_TYPES.filter((t) => t !== 'test.ping'));
});

test('the API key form offers every scope the API checks, each with a description', () => {
  assert.deepEqual([...SCOPES], [...API_SCOPES]);
  for (const s of SCOPES) assert.ok(SCOPE_DESCRIPTIONS[s].length > 0, s);
});
