import { useCallback, useEffect, useId, useRef, useState, useSyncExternalStore, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { errorMessage } from '../api/client';
import { getSync, joinSync } from '../api/sync';
import type { SyncStatus } from '../api/types';
import { ConfirmButton } from '../components/ConfirmButton';
import { ErrorNote, Field, FormError, Loading, ScreenHead, useApiForm } from '../components/ui';
import { useApp } from '../lib/app';
import { useNow, useServiceEvents } from '../lib/hooks';
import { fmtDateTime, formatAge } from '../lib/time';
import '../screens/integrations/SyncCard.css';
import { SyncCardHead, underPairingCode } from '../screens/integrations/SyncCard';
import { createStore } from '../lib/store';
import { erased } from './erased';
import { QrScanner } from './QrScanner';
import { forgetServiceWorker } from './sw-register';
import type { ControlResults } from './protocol';
import type { CoreWorker } from './transport';
import './sw-prompt.css';

/**
 * How often the card asks again while sync is on: the changes not yet synced and the last sync move
 * without an event (as on a computer's card); the connection and the devices come as events too.
 */
const POLL_MS = 5000;
/** How often the meals that arrived so far are counted while a join downloads the history. */
const PROGRESS_MS = 700;

/** The note beside the app while a join brings older months (shaped like the update prompt, sw-register.ts). */
const NOTE_ID = 'sync-join-note';

type Progress = ControlResults['progress'];

/**
 * The join under way, watched from the page rather than the card: once the current weeks are in,
 * the app shows Today, and the join goes on while the person uses it.
 */
const joinWatch = createStore<Progress | null>(null);
joinWatch.subscribe(() => showJoinNote(joinWatch.get()));

/** Asks the worker how far the join has come until `request` settles. */
function watchJoin(core: Pick<CoreWorker, 'control'>, request: Promise<unknown>): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const tick = async () => {
    const p = await core.control('progress').catch(() => null);
    if (stopped) return;
    if (p) joinWatch.update(() => p);
    timer = setTimeout(() => void tick(), PROGRESS_MS);
  };
  void tick();
  void request
    .catch(() => undefined)
    .finally(() => {
      stopped = true;
      clearTimeout(timer);
      joinWatch.update(() => null);
    });
}

const percentOf = (j: NonNullable<Progress['join']>): number => (j.totalBytes > 0 ? Math.min(99, Math.floor((100 * j.appliedBytes) / j.totalBytes)) : 0);

/** "Syncing older history… N%": first in the page (above Today) from the current weeks' arrival to the join's end. */
function showJoinNote(progress: Progress | null): void {
  const join = progress?.join;
  let note = document.getElementById(NOTE_ID);
  if (!join || join.phase === 'recent') {
    note?.remove();
    return;
  }
  if (!note) {
    note = document.createElement('aside');
    note.id = NOTE_ID;
    note.className = 'update-prompt';
    note.setAttribute('aria-label', 'Sync');
    const text = document.createElement('p');
    text.setAttribute('role', 'status');
    note.append(text);
    document.body.prepend(note);
  }
  note.firstElementChild!.textContent = `Syncing older history… ${percentOf(join)}%`;
}

/** PHONE-PEER.md §D: without a secure context there is no WebCrypto, OPFS or service worker. */
export const NOT_SECURE =
  'Chyme on a phone needs HTTPS: serve the relay through Tailscale Serve or Caddy (see docs/sync-relay.md), then open its https:// address here.';

/** Safari on iOS and iPadOS (an iPad says it is a Mac, but has touch) keeps a site's data for good only once it is on the home screen. */
function iosLike(): boolean {
  const iPadAsMac = navigator.platform === 'MacIntel' && navigator.maxTouchPoints > 1;
  return /iPhone|iPad|iPod/.test(navigator.userAgent) || iPadAsMac;
}
const standalone = () => matchMedia('(display-mode: standalone)').matches || (navigator as { standalone?: boolean }).standalone === true;

const PERSIST_REFUSED = 'This browser did not promise to keep Chyme’s data: it may erase it when storage runs low. Your history is safe on your other devices; what this phone has not synced yet is not.';

/**
 * The phone's Integrations screen: its Sync card. Off: join the history with a pairing code (typed,
 * pasted, scanned with the camera, or prefilled from the QR code's `#pair=` link). On: the
 * connection, the changes not yet synced, the devices, and "Forget this phone" (leave, then erase
 * the phone's storage).
 */
export function PhoneSync({ core, pairingCode }: { core: Pick<CoreWorker, 'control'>; pairingCode: string }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const [status, setStatus] = useState<SyncStatus | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [persistRefused, setPersistRefused] = useState(false);

  const load = useCallback(async (signal?: AbortSignal) => {
    try {
      setStatus(await getSync(signal));
      setLoadError(null);
    } catch (err) {
      if ((err as Error)?.name !== 'AbortError') setLoadError(err);
    }
  }, []);

  const enabled = status?.enabled ?? false;
  useEffect(() => {
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      await load(ctrl.signal);
      if (enabled && !ctrl.signal.aborted) timer = setTimeout(() => void tick(), POLL_MS);
    };
    void tick();
    return () => {
      ctrl.abort();
      clearTimeout(timer);
    };
  }, [enabled, load]);

  useServiceEvents(['sync.'], () => void load());

  useEffect(() => {
    if (enabled) void navigator.storage?.persisted?.().then((kept) => setPersistRefused(!kept));
  }, [enabled]);

  async function joined(s: SyncStatus) {
    setStatus(s);
    headingRef.current?.focus();
    // Asked right after joining: from now on this phone holds changes that exist nowhere else until they sync.
    const kept = (await navigator.storage?.persist?.().catch(() => false)) ?? false;
    setPersistRefused(!kept);
  }

  return (
    <div className="screen" data-testid="integrations">
      <ScreenHead title="Integrations" subtitle="Sync this phone with your computers." />
      <section className="card sync" id="sync" aria-labelledby="sync-title" data-testid="sync-card" data-sync={!isSecureContext ? 'refused' : status ? (status.enabled ? 'on' : 'off') : 'loading'}>
        <SyncCardHead enabled={status?.enabled ?? false} headingRef={headingRef} />
        {!isSecureContext ? (
          <p role="alert">{NOT_SECURE}</p>
        ) : !status ? (
          loadError ? <ErrorNote error={loadError} onRetry={() => void load()} /> : <Loading />
        ) : status.enabled ? (
          <PhoneSyncOn status={status} core={core} />
        ) : (
          <PhoneJoin core={core} initialCode={pairingCode} onJoined={(s) => void joined(s)} />
        )}
        {status?.enabled && persistRefused ? (
          <p className="muted small" data-testid="sync-persist">
            {PERSIST_REFUSED}
          </p>
        ) : null}
      </section>
    </div>
  );
}

function PhoneJoin({ core, initialCode, onJoined }: { core: Pick<CoreWorker, 'control'>; initialCode: string; onJoined: (s: SyncStatus) => void }) {
  const app = useApp();
  const ids = useId();
  const [join, setJoin] = useState({ pairing_code: initialCode, name: '' });
  const progress = useSyncExternalStore(joinWatch.subscribe, joinWatch.get);
  const meals = progress?.meals ?? null;
  const [scanning, setScanning] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const form = useApiForm((p) => p in join);

  /** A scanned code goes into the field and is submitted by the same form as a typed one. */
  function scanned(code: string) {
    flushSync(() => {
      setScanning(false);
      setJoin((j) => ({ ...j, pairing_code: code }));
    });
    formRef.current?.requestSubmit();
  }

  // The current weeks are in: Today is right, so the app shows it while older months arrive.
  const recentIn = progress?.join?.phase === 'older';
  useEffect(() => {
    if (recentIn) location.hash = '#/today';
  }, [recentIn]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    await form.send(async () => {
      const name = join.name.trim();
      try {
        const request = joinSync({ pairing_code: join.pairing_code.trim(), ...(name ? { name } : {}) });
        watchJoin(core, request);
        const s = await request;
        app.toast('Joined: this phone now has your history and keeps it in sync.');
        onJoined(s);
      } catch (err) {
        throw underPairingCode(err);
      }
    });
  }

  const errId = `${ids}-err`;
  return (
    <>
      <p>Join the history your computers share: on a computer, Integrations → Sync → “Add a phone” shows a QR code and a pairing code.</p>
      {iosLike() && !standalone() ? (
        <p data-testid="sync-install-first">
          <strong>First add Chyme to your home screen</strong> (Share → Add to Home Screen) and pair from there: Safari erases a website’s data after a week without a visit, but keeps a home-screen app’s.
        </p>
      ) : null}
      <form ref={formRef} className="stack" onSubmit={(e) => void submit(e)} noValidate aria-describedby={form.errors[''] ? errId : undefined} data-testid="sync-join">
        <FormError errors={form.errors} id={errId} />
        <Field label="Pairing code" error={form.errors.pairing_code} hint="It holds the relay’s address and the key to your history: treat it as a password.">
          {({ id, describedBy, invalid }) => (
            <textarea id={id} rows={4} value={join.pairing_code} onChange={(e) => setJoin({ ...join, pairing_code: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" autoCapitalize="characters" spellCheck={false} className="sync__code-input" />
          )}
        </Field>
        <button type="button" className="btn qr-scan-open" onClick={() => setScanning(true)} disabled={form.busy} data-testid="sync-scan">
          Scan QR code
        </button>
        <Field label="This phone’s name" error={form.errors.name} hint="How your computers list this phone. Empty: “Phone”.">
          {({ id, describedBy, invalid }) => (
            <input id={id} type="text" value={join.name} maxLength={60} onChange={(e) => setJoin({ ...join, name: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
          )}
        </Field>
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={form.busy}>
            Join
          </button>
          <span className="muted small" role="status" data-testid="sync-join-progress">
            {form.busy ? (meals ? `Joining: ${meals} meal${meals === 1 ? '' : 's'} so far, more coming` : 'Joining: downloading your history…') : ''}
          </span>
        </div>
      </form>
      {scanning ? <QrScanner onCode={scanned} onClose={() => setScanning(false)} /> : null}
    </>
  );
}

function PhoneSyncOn({ status, core }: { status: SyncStatus; core: Pick<CoreWorker, 'control'> }) {
  const app = useApp();
  const tz = app.settings.timezone;
  const now = useNow(60_000);
  const ids = useId();
  const [forgetting, setForgetting] = useState(false);
  const [forgetError, setForgetError] = useState<string | null>(null);

  async function forget() {
    setForgetting(true);
    setForgetError(null);
    try {
      await core.control('forget');
      await forgetServiceWorker();
      // In place, with no reload: no network is needed, and nothing is created again.
      erased();
    } catch (err) {
      setForgetError(errorMessage(err));
      setForgetting(false);
    }
  }

  const last = status.last_synced_at;
  const pending = status.pending_changes;
  const others = status.peers.filter((d) => !d.this_device);
  return (
    <>
      <p className={`sync__conn ${status.connected ? 'is-connected' : 'is-down'}`} role="status" data-testid="sync-connection">
        <span className="sync__dot" aria-hidden="true" />
        <span>
          {status.connected
            ? 'Connected to your relay'
            : last
              ? `Not connected since ${fmtDateTime(last, tz)}`
              : 'Not connected yet'}
        </span>
      </p>
      <dl className="facts sync__facts">
        <div>
          <dt>Last sync</dt>
          <dd data-testid="sync-last">{last ? `${formatAge(Date.parse(last), now)} (${fmtDateTime(last, tz)})` : 'Not yet'}</dd>
        </div>
        <div>
          <dt>Waiting to sync</dt>
          <dd data-testid="sync-pending">{pending === 0 ? 'Nothing: every change is synced' : `${pending} change${pending === 1 ? '' : 's'} not yet synced`}</dd>
        </div>
        <div>
          <dt>Syncs with</dt>
          <dd data-testid="sync-devices">{others.length ? others.map((d) => d.device_name).join(', ') : 'No other device yet'}</dd>
        </div>
      </dl>
      {status.last_error && !status.connected ? <p className="muted small">{status.last_error}</p> : null}
      <div className="form-actions">
        <ConfirmButton label="Forget this phone…" confirmLabel="Yes, erase this phone’s Chyme" describedBy={`${ids}-forget-note`} disabled={forgetting} onConfirm={() => void forget()} />
        {forgetting ? (
          <span className="muted small" role="status">
            Forgetting…
          </span>
        ) : null}
      </div>
      <p className="muted small" id={`${ids}-forget-note`}>
        Stops syncing and erases everything Chyme keeps on this phone; your computers keep the history.
        {pending > 0 ? ` ${pending} change${pending === 1 ? '' : 's'} made here and not yet synced would be lost.` : ''}
      </p>
      {forgetError ? (
        <p className="form-error" role="alert">
          {forgetError}
        </p>
      ) : null}
    </>
  );
}
