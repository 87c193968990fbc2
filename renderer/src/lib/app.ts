import { createContext, useContext } from 'react';
import type { Meal, Settings } from '../api/types';

export type Route = 'today' | 'log' | 'score' | 'timeline' | 'import' | 'integrations';

export interface ToastAction {
  label: string;
  /**
   * Runs the action. It may name, as a CSS selector, the control keyboard focus should land on
   * once the screen shows the action's result (the restored meal's row), since the toast and its
   * button go away.
   */
  run: () => void | Promise<void | { focus: string }>;
}

export interface ToastOptions {
  action?: ToastAction;
  tone?: 'info' | 'error';
  /**
   * The control that had focus when the person started what the toast reports, taken before any
   * await. By the time the toast shows, the list may already have reloaded without it (a deleted
   * meal's row), and focus has dropped to the page; this says where it was.
   */
  origin?: Element | null;
}

/** What the meal form should open with when another screen sends the user to it. */
export interface MealDraft {
  mode: 'edit' | 'copy';
  meal: Meal;
}

export interface AppContextValue {
  settings: Settings;
  setSettings: (s: Settings) => void;
  /** The user's time zone (from settings). */
  tz: string;
  /** The user's day start "HH:MM" (from settings). */
  dayStart: string;
  /** The user's current day, YYYY-MM-DD, following the service's clock. */
  today: string;
  toast: (message: string, opts?: ToastOptions) => void;
  /** Takes the toast away (a form's error replaces what it said about an earlier action). */
  dismissToast: () => void;
  navigate: (route: Route, params?: Record<string, string>) => void;
  /** Opens the meal form on a meal to edit or copy. */
  openMeal: (draft: MealDraft) => void;
  /** Takes (and clears) the pending draft, if any. */
  takeDraft: () => MealDraft | null;
}

export const AppContext = createContext<AppContextValue | null>(null);

export function useApp(): AppContextValue {
  const ctx = useContext(AppContext);
  if (!ctx) throw new Error('useApp outside <AppContext>');
  return ctx;
}

let startingAfresh = false;

/**
 * A backup was restored: every screen's data changed at once, so the app starts afresh on the
 * restored data. One path whoever restored it (the Backups card, `chyme restore`, another client):
 * the service's `database.restored` notice calls it, and the card too in case the stream is down.
 */
export function startAfreshAfterRestore(delayMs: number): void {
  if (startingAfresh) return;
  startingAfresh = true;
  setTimeout(() => location.reload(), delayMs);
}
