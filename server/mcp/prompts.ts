import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../app-context.js';
import type { Principal } from '../auth/scopes.js';
import { digestionContext } from '../digestion/service.js';
import { dateString } from '../fields.js';
import { readResource, RESOURCES } from './resources.js';
import { invalidParams } from './sdk.js';

/**
 * The `daily_review` prompt: a review of one day with the person, from their own data. For today
 * it carries the live resources the key may read (today's meals, the state now); for any day it
 * asks the assistant to fetch the rest with the read tools.
 */
export const DAILY_REVIEW: Prompt = {
  name: 'daily_review',
  title: 'Daily review',
  description: 'Review a day of eating and digestion: meals, gut score and its components, the digestive state, and one or two suggestions drawn from the data.',
  arguments: [{ name: 'date', description: 'The day to review, YYYY-MM-DD (default today).', required: false }],
};

export function dailyReviewMessages(app: AppContext, principal: Principal, args: Record<string, string>): GetPromptResult {
  const today = digestionContext(app).today;
  const date = args.date?.trim() || today;
  if (!dateString.safeParse(date).success) throw invalidParams(`Invalid date: must be a real date written YYYY-MM-DD (got "${date}").`);
  const isToday = date === today;
  const text = [
    `Review my day ${date}${isToday ? ' (today, so far)' : ''} from my Chyme data.`,
    `Use get_snapshot (or list_meals with start_date=end_date=${date} and get_daily_scores with start_date=end_date=${date}) for what is not attached.`,
    'Tell me: what I ate and when, with calories and macros; my gut score for the day and which of its four components (overnight, fasted_ratio, regularity, circadian) helped or pulled it down;',
    isToday ? 'where my digestion is now and when it changes next;' : 'how late my last meal was relative to my sleep;',
    'and one or two concrete, kind suggestions that follow from these numbers. Do not invent numbers that are not in the data.',
  ].join(' ');
  const attached = isToday ? RESOURCES.filter((r) => principal.scopes.has(r.scope)).map((r) => readResource(app, principal, r.uri)) : [];
  return {
    description: `Review of ${date}`,
    messages: [
      { role: 'user', content: { type: 'text', text } },
      ...attached.map((resource) => ({ role: 'user' as const, content: { type: 'resource' as const, resource } })),
    ],
  };
}
