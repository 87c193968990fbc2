// The renderer cannot import server modules (the browser bundle holds no server code), so it keeps
// its own list of event names for the webhook form. This test keeps the two lists from drifting.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WEBHOOK_EVENTS } from '../../renderer/src/api/types.js';
import { EVENT_TYPES } from '../../server/events/types.js';

test('the webhook form offers exactly the events a subscription may list (all but test.ping)', () => {
  const subscribable = EVENT_TYPES.filter((t) => t !== 'test.ping');
  assert.deepEqual([...WEBHOOK_EVENTS], subscribable);
});
