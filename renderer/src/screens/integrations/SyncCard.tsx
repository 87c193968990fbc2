import { useCallback, useEffect, useId, useRef, useState, type FormEvent, type RefObject } from 'react';
import { ApiError, errorMessage } from '../../api/client';
import { getPairingCode, getSync, joinSync, leaveSync, makeWebhookHost, setupSync } from '../../api/sync';
import type { EventType, SyncConflict, SyncPairing, SyncStatus } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { CopyButton } from '../../components/CopyButton';
import { Chip, ErrorNote, Field, FormError, Loading, useApiForm } from '../../components/ui';
import { useApp } from '../../lib/app';
import { useNow, useServiceEvents } from '../../lib/hooks';
import { fmtDateTime, formatAge } from '../../lib/time';
import './SyncCard.css';

/** The events after which what the card shows is stale (a device came or went, the host moved). */
const SYNC_EVENTS = ['sync.device_joined', 'sync.device_left', 'sync.webhook_host_changed', 'sync.status_changed'] as const satisfies readonly EventType[];

/**
 * How often the card asks again while it is on screen and sync is on: the connection, the last
 * sync and the pending changes move without any event.
 */
const POLL_MS = 5000;

const RECORD_LABEL: Record<SyncConflict['record_type'], string> = {
  meal: 'Meal',
  sleep: 'Sleep',
  food: 'Custom food',
  saved_meal: 'Saved meal',
  settings: 'Settings',
};

/**
 * Integrations → Sync: off, how sync works and the two ways in (set up on a first computer, or
 * join with a pairing code); on, the connection, the devices, who sends webhooks, conflicts, the
 * pairing code for the next computer, and leaving.
 */
export function SyncCard() {
  const cardRef = useRef<HTMLElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const [status, setStatus] = useState<SyncStatus | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  // Answers can arrive out of order (a poll sent before "Leave" answering after it): the newest
  // request's answer wins, and an action's own answer counts as newer than any request before it.
  const issued = useRef(0);
  const applied = useRef(0);
  // Set by the person's own action that turns sync on or off: focus then moves to the card's
  // heading, since the form or button they used is gone. A change from elsewhere moves nothing.
  const focusOnSwitch = useRef(false);
  // Counts those actions' answers: the event stream may have shown the new state first (leaving
  // announces sync.device_left before the answer comes), and focus must still move.
  const [switches, setSwitches] = useState(0);

  const load = useCallback(async (signal?: AbortSignal) => {
    const mine = ++issued.current;
    try {
      const s = await getSync(signal);
      if (mine < applied.current) return;
      applied.current = mine;
      setStatus(s);
      setLoadError(null);
    } catch (err) {
      if ((err as Error)?.name === 'AbortError' || mine < applied.current) return;
      setLoadError(err);
    }
  }, []);

  const show = useCallback((s: SyncStatus, switched = false) => {
    applied.current = ++issued.current;
    if (switched) {
      focusOnSwitch.current = true;
      setSwitches((n) => n + 1);
    }
    setStatus(s);
    setLoadError(null);
  }, []);

  useEffect(() => {
    const ctrl = new AbortController();
    void load(ctrl.signal);
    return () => ctrl.abort();
  }, [load]);

  useServiceEvents(SYNC_EVENTS, () => void load());

  const onScreen = useOnScreen(cardRef);
  const enabled = status?.enabled ?? false;
  useEffect(() => {
    if (!enabled || !onScreen) return;
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Back on screen: ask at once, then every POLL_MS after each answer (never two at a time).
    const tick = async () => {
      await load(ctrl.signal);
      if (!ctrl.signal.aborted) timer = setTimeout(() => void tick(), POLL_MS);
    };
    void tick();
    return () => {
      ctrl.abort();
      clearTimeout(timer);
    };
  }, [enabled, onScreen, load]);

  useEffect(() => {
    if (!focusOnSwitch.current) return;
    focusOnSwitch.current = false;
    headingRef.current?.focus();
  }, [enabled, switches]);

  return (
    <section ref={cardRef} className="card sync" id="sync" aria-labelledby="sync-title" data-testid="sync-card" data-sync={status ? (status.enabled ? 'on' : 'off') : 'loading'}>
      <SyncCardHead enabled={status?.enabled ?? false} headingRef={headingRef} />
      {!status ? (
        loadError ? (
          <ErrorNote error={loadError} onRetry={() => void load()} />
        ) : (
          <Loading />
        )
      ) : status.enabled ? (
        <SyncOn status={status} show={show} reload={() => void load()} />
      ) : (
        <SyncOff show={show} reload={() => void load()} />
      )}
    </section>
  );
}

/** The card's heading (focus moves to it when sync turns on or off) and whether sync is on; the phone's card has the same. */
export function SyncCardHead({ enabled, headingRef }: { enabled: boolean; headingRef: RefObject<HTMLHeadingElement | null> }) {
  return (
    <header className="card__head">
      <h2 id="sync-title" tabIndex={-1} ref={headingRef}>
        Sync
      </h2>
      {enabled ? <Chip tone="positive">On</Chip> : null}
    </header>
  );
}

/** Whether the element is on screen: in the viewport, and the window not hidden or minimised. */
function useOnScreen(ref: RefObject<HTMLElement | null>): boolean {
  const [inView, setInView] = useState(true);
  const [pageShown, setPageShown] = useState(() => document.visibilityState === 'visible');
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof IntersectionObserver === 'undefined') return;
    const io = new IntersectionObserver((entries) => setInView(entries.some((e) => e.isIntersecting)));
    io.observe(el);
    return () => io.disconnect();
  }, [ref]);
  useEffect(() => {
    const onChange = () => setPageShown(document.visibilityState === 'visible');
    document.addEventListener('visibilitychange', onChange);
    return () => document.removeEventListener('visibilitychange', onChange);
  }, []);
  return inView && pageShown;
}

/**
 * The service names the code it refused without a `param` when the code is well-formed JSON but
 * not a pairing code; it still belongs under the field the person pasted it into.
 */
export function underPairingCode(err: unknown): unknown {
  if (err instanceof ApiError && err.code === 'invalid_pairing_code' && !err.param) {
    return new ApiError(err.status, { type: 'invalid_request_error', code: err.code, message: err.message, param: 'pairing_code', request_id: err.requestId });
  }
  return err;
}

/** Another window or the command line may have turned sync on or off meanwhile: show the truth. */
const STATE_CODES = new Set(['sync_already_enabled', 'sync_not_enabled']);
const changedElsewhere = (err: unknown) => err instanceof ApiError && STATE_CODES.has(err.code);

function SyncOff({ show, reload }: { show: (s: SyncStatus, switched?: boolean) => void; reload: () => void }) {
  const app = useApp();
  const ids = useId();
  const [setup, setSetup] = useState({ relay: '', token: '', name: '' });
  const [join, setJoin] = useState({ pairing_code: '', name: '' });
  const setupForm = useApiForm((p) => p in setup);
  const joinForm = useApiForm((p) => p in join);
  const busy = setupForm.busy || joinForm.busy;

  async function submitSetup(e: FormEvent) {
    e.preventDefault();
    await setupForm.send(async () => {
      try {
        const name = setup.name.trim();
        const s = await setupSync({ relay: setup.relay.trim(), token: setup.token.trim(), ...(name ? { name } : {}) });
        app.toast('Sync is on. Add your other computers with the pairing code.');
        show(s, true);
      } catch (err) {
        if (changedElsewhere(err)) reload();
        throw err;
      }
    });
  }

  async function submitJoin(e: FormEvent) {
    e.preventDefault();
    await joinForm.send(async () => {
      try {
        const name = join.name.trim();
        const s = await joinSync({ pairing_code: join.pairing_code.trim(), ...(name ? { name } : {}) });
        app.toast('Joined: this computer now has your history and keeps it in sync.');
        show(s, true);
      } catch (err) {
        if (changedElsewhere(err)) reload();
        throw underPairingCode(err);
      }
    });
  }

  const setupErrId = `${ids}-setup-err`;
  const joinErrId = `${ids}-join-err`;
  return (
    <>
      <p>
        Sync keeps your meals, sleep, custom foods, saved meals and settings the same on all your computers. They meet at a relay you run yourself:{' '}
        <code>chyme relay</code> on a home server, a NAS or a small VPS.
      </p>
      <p className="muted small">
        Sync is end-to-end encrypted: the relay stores only sealed changes that nobody without your pairing code can read, so it may run on a rented server. API keys, webhook secrets and MQTT passwords never leave this device.
      </p>
      <div className="sync__forms">
        <form className="stack sync__form" onSubmit={(e) => void submitSetup(e)} noValidate aria-labelledby={`${ids}-setup-title`} aria-describedby={setupForm.errors[''] ? setupErrId : undefined} data-testid="sync-setup">
          <div>
            <h3 id={`${ids}-setup-title`}>Set up sync on this device</h3>
            <p className="muted small">On your first computer: point it at your relay.</p>
          </div>
          <FormError errors={setupForm.errors} id={setupErrId} />
          <Field label="Relay URL" error={setupForm.errors.relay} hint={<>The address <code>chyme relay</code> printed: ws://…, or wss://… behind TLS.</>}>
            {({ id, describedBy, invalid }) => (
              <input id={id} type="url" value={setup.relay} placeholder="ws://nas.local:7651" onChange={(e) => setSetup({ ...setup, relay: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" spellCheck={false} />
            )}
          </Field>
          <Field label="Relay token" error={setupForm.errors.token} hint={<>The “Token:” line <code>chyme relay</code> printed.</>}>
            {({ id, describedBy, invalid }) => (
              <input id={id} type="password" value={setup.token} onChange={(e) => setSetup({ ...setup, token: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" spellCheck={false} />
            )}
          </Field>
          <Field label="This device’s name" error={setupForm.errors.name} hint="How your other computers list this one. Empty: this computer’s name.">
            {({ id, describedBy, invalid }) => (
              <input id={id} type="text" value={setup.name} maxLength={60} onChange={(e) => setSetup({ ...setup, name: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
            )}
          </Field>
          <div className="form-actions">
            <button type="submit" className="btn btn--primary" disabled={busy}>
              Set up sync
            </button>
            <span className="muted small" role="status">
              {setupForm.busy ? 'Connecting to the relay…' : ''}
            </span>
          </div>
        </form>
        <form className="stack sync__form" onSubmit={(e) => void submitJoin(e)} noValidate aria-labelledby={`${ids}-join-title`} aria-describedby={joinForm.errors[''] ? joinErrId : undefined} data-testid="sync-join">
          <div>
            <h3 id={`${ids}-join-title`}>Join with a pairing code</h3>
            <p className="muted small">On every other computer: paste the code “Show pairing code” gives on one that syncs.</p>
          </div>
          <FormError errors={joinForm.errors} id={joinErrId} />
          <Field label="Pairing code" error={joinForm.errors.pairing_code} hint="It holds the relay’s address and the key to your history: treat it as a password.">
            {({ id, describedBy, invalid }) => (
              <textarea id={id} rows={4} value={join.pairing_code} onChange={(e) => setJoin({ ...join, pairing_code: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" spellCheck={false} className="sync__code-input" />
            )}
          </Field>
          <Field label="This device’s name" error={joinForm.errors.name} hint="How your other computers list this one. Empty: this computer’s name.">
            {({ id, describedBy, invalid }) => (
              <input id={id} type="text" value={join.name} maxLength={60} onChange={(e) => setJoin({ ...join, name: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
            )}
          </Field>
          <div className="form-actions">
            <button type="submit" className="btn btn--primary" disabled={busy}>
              Join
            </button>
            <span className="muted small" role="status" data-testid="sync-join-progress">
              {joinForm.busy ? 'Joining… downloading your history' : ''}
            </span>
          </div>
        </form>
      </div>
    </>
  );
}

function SyncOn({ status, show, reload }: { status: SyncStatus; show: (s: SyncStatus, switched?: boolean) => void; reload: () => void }) {
  const app = useApp();
  const tz = app.settings.timezone;
  const now = useNow(60_000);
  const ids = useId();
  const [busy, setBusy] = useState<'host' | 'leave' | null>(null);
  const [actionError, setActionError] = useState<{ on: 'host' | 'leave'; message: string } | null>(null);

  async function act(on: 'host' | 'leave', fn: () => Promise<SyncStatus>, done: string) {
    setBusy(on);
    setActionError(null);
    try {
      const s = await fn();
      app.toast(done);
      show(s, on === 'leave');
    } catch (err) {
      setActionError({ on, message: errorMessage(err) });
      if (changedElsewhere(err)) reload();
    } finally {
      setBusy(null);
    }
  }

  const when = (iso: string) => (
    <>
      {formatAge(Date.parse(iso), now)} <span className="muted">({fmtDateTime(iso, tz)})</span>
    </>
  );
  const host = status.webhook_host;
  const pending = status.pending_changes;
  return (
    <>
      <p className={`sync__conn ${status.connected ? 'is-connected' : 'is-down'}`} role="status" data-testid="sync-connection">
        <span className="sync__dot" aria-hidden="true" />
        <span>
          {status.connected ? (
            <>
              Connected to <code>{status.relay}</code>
            </>
          ) : status.last_error ? (
            <>Not connected: {status.last_error}</>
          ) : (
            <>
              Not connected yet: trying <code>{status.relay}</code>
            </>
          )}
        </span>
      </p>
      <dl className="facts sync__facts">
        <div>
          <dt>Last sync</dt>
          <dd data-testid="sync-last">
            {status.last_synced_at ? when(status.last_synced_at) : 'Not yet'}
            {status.last_synced_at && !status.connected ? <span className="muted"> · not connected since</span> : null}
          </dd>
        </div>
        <div>
          <dt>Encryption</dt>
          <dd>End to end: the relay stores only sealed changes it cannot read</dd>
        </div>
        <div>
          <dt>Waiting to sync</dt>
          <dd data-testid="sync-pending">
            {pending === 0 ? 'Nothing: the relay has every change' : `${pending} change${pending === 1 ? '' : 's'} not yet on the relay`}
          </dd>
        </div>
      </dl>

      <h3 className="sync__subhead" id={`${ids}-devices`}>
        Devices
      </h3>
      <ul className="sync__devices" aria-labelledby={`${ids}-devices`} data-testid="sync-devices">
        {status.peers.map((d) => (
          <li key={d.device_id} className="sync__device">
            <span className="sync__device-name">
              {d.device_name}
              {d.this_device ? <Chip tone="positive">this device</Chip> : null}
            </span>
            <span className="muted small">
              Joined {fmtDateTime(d.joined_at, tz)} · {d.last_seen_at ? <>last seen {formatAge(Date.parse(d.last_seen_at), now)} ({fmtDateTime(d.last_seen_at, tz)})</> : 'not seen yet'}
            </span>
          </li>
        ))}
      </ul>

      <h3 className="sync__subhead">Webhooks and MQTT</h3>
      <div className="stack sync__host" data-testid="sync-webhook-host">
        <p>
          {host ? (
            <>
              Webhooks and MQTT are sent by <strong>{host.device_name}</strong>
              {status.is_webhook_host ? ' (this device)' : ''} <span className="muted">since {fmtDateTime(host.since, tz)}</span>. One device sends them, so each event arrives once.
            </>
          ) : (
            <>No device sends webhooks and MQTT messages at the moment.</>
          )}
        </p>
        {!status.is_webhook_host ? (
          <div className="form-actions">
            <button type="button" className="btn" disabled={busy !== null} aria-describedby={`${ids}-host-note`} onClick={() => void act('host', makeWebhookHost, 'This device now sends webhooks and MQTT.')}>
              Send webhooks from this device
            </button>
            <span className="muted small" id={`${ids}-host-note`}>
              {host ? `${host.device_name} then stops sending them.` : 'It then sends them for all your devices.'}
            </span>
          </div>
        ) : null}
        {actionError?.on === 'host' ? (
          <p className="form-error" role="alert">
            {actionError.message}
          </p>
        ) : null}
      </div>

      {status.conflicts.length > 0 ? (
        <>
          <h3 className="sync__subhead" id={`${ids}-conflicts`}>
            Edits made at the same time
          </h3>
          <p className="muted small">Two devices changed the same thing before they synced. Every device now has the kept value; if the other one was right, change it back by hand.</p>
          <ul className="sync__conflicts" aria-labelledby={`${ids}-conflicts`} data-testid="sync-conflicts">
            {status.conflicts.map((c, i) => (
              <li key={`${c.record_type}/${c.record_id}/${c.field}/${c.detected_at}/${i}`}>
                {RECORD_LABEL[c.record_type]}
                {c.record_type === 'settings' ? null : c.record_label ? (
                  <> “{c.record_label}”</>
                ) : (
                  <>
                    {' '}
                    <code>{c.record_id}</code> <span className="muted small">(since deleted)</span>
                  </>
                )}
                : {c.field} — kept {fmtValue(c.kept)}
                {c.other_values.length ? `, also seen ${c.other_values.map(fmtValue).join(', ')}` : ''} <span className="muted small">({fmtDateTime(c.detected_at, tz)})</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}

      {status.integrity.length > 0 ? (
        <>
          <h3 className="sync__subhead" id={`${ids}-integrity`}>
            Changes that failed their check
          </h3>
          <p className="muted small">
            These pieces of the history on the relay were altered or moved, so this device skipped them: nobody without your pairing code can forge a change. Everything else synced as usual; the device that made the change still has it.
          </p>
          <ul className="sync__conflicts" aria-labelledby={`${ids}-integrity`} data-testid="sync-integrity">
            {status.integrity.map((p) => (
              <li key={`${p.relay_seq}/${p.detected_at}`}>
                {p.problem} <span className="muted small">(relay entry {p.relay_seq}, {fmtDateTime(p.detected_at, tz)})</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}

      <h3 className="sync__subhead">Add another computer</h3>
      <PairingCode for="computer" />

      <h3 className="sync__subhead">Add a phone</h3>
      <PairingCode for="phone" />

      <h3 className="sync__subhead">Leave sync</h3>
      <div className="stack sync__leave">
        <p className="muted small" id={`${ids}-leave-note`}>
          This device stops syncing. Your data stays on it; your other computers keep theirs and go on syncing without it.
        </p>
        <div className="form-actions">
          <ConfirmButton
            label="Leave sync…"
            confirmLabel="Yes, stop syncing this device"
            describedBy={`${ids}-leave-note`}
            disabled={busy !== null}
            onConfirm={() => void act('leave', leaveSync, 'Sync is off on this device. Your data stays here.')}
          />
          {busy === 'leave' ? (
            <span className="muted small" role="status">
              Leaving…
            </span>
          ) : null}
        </div>
        {actionError?.on === 'leave' ? (
          <p className="form-error" role="alert">
            {actionError.message}
          </p>
        ) : null}
      </div>
    </>
  );
}

/** A conflict's value as a person reads it: numbers as they are, text in quotes, "nothing" for none. */
function fmtValue(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (typeof v === 'string') return `“${v.length > 60 ? `${v.slice(0, 59)}…` : v}”`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 59)}…` : s;
}

/** What each "Add …" section says and which address its QR code holds. */
const PAIRING = {
  computer: {
    intro: 'On the other computer, open Integrations → Sync and paste this code under “Join with a pairing code”, or scan its QR code.',
    show: 'Show pairing code',
    hide: 'Hide pairing code',
    testId: 'sync-pairing',
    qrAlt: 'QR code of the pairing code above, to scan with the other computer’s camera',
    qrText: (p: SyncPairing) => p.pairing_code,
  },
  phone: {
    intro:
      'Scan the QR code with your phone’s camera: it opens Chyme from your relay with this code filled in. On an iPhone, add the app to the Home Screen first (Share → Add to Home Screen), open it from there, then scan the code again or paste the text.',
    show: 'Show the phone’s QR code',
    hide: 'Hide the phone’s QR code',
    testId: 'sync-phone',
    qrAlt: 'QR code that opens Chyme on your phone with the pairing code above filled in',
    qrText: (p: SyncPairing) => p.url,
  },
} as const;

/**
 * The pairing code on request, for another computer or for a phone: as text to copy and as a QR
 * code (a phone's holds the address of the app on the relay, with the code in its fragment). The
 * QR code library is loaded only then (its own small chunk), so nobody who never pairs a device
 * downloads it.
 */
function PairingCode({ for: device }: { for: keyof typeof PAIRING }) {
  const text = PAIRING[device];
  const ids = useId();
  const [open, setOpen] = useState(false);
  const [pairing, setPairing] = useState<SyncPairing | null>(null);
  const [qr, setQr] = useState<string | null>(null);
  const [qrError, setQrError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function reveal() {
    setBusy(true);
    setError(null);
    setQr(null);
    setQrError(null);
    try {
      const p = await getPairingCode();
      setPairing(p);
      setOpen(true);
      try {
        setQr(await qrImage(text.qrText(p)));
      } catch (err) {
        // The code is text first: too long for a QR symbol, or the QR chunk not loading, it is still copied.
        setQrError(`No QR code for this one (${errorMessage(err)}): copy the text instead.`);
      }
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  }

  function hide() {
    setOpen(false);
    setPairing(null);
    setQr(null);
  }

  const code = pairing?.pairing_code;
  // A browser keeps the phone's storage and camera for secure pages only: over plain http the app would not pair.
  const insecure = device === 'phone' && pairing !== null && new URL(pairing.url).protocol === 'http:';
  return (
    <div className="stack sync__pairing">
      <p className="muted small">{text.intro}</p>
      <div className="form-actions">
        <button type="button" className="btn" aria-expanded={open} aria-controls={`${ids}-code`} disabled={busy} onClick={() => (open ? hide() : void reveal())}>
          {open ? text.hide : text.show}
        </button>
        {busy ? (
          <span className="muted small" role="status">
            Getting the code…
          </span>
        ) : null}
      </div>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <div id={`${ids}-code`} hidden={!open || !code} data-testid={text.testId}>
        {open && code ? (
          <div className="sync__pairing-body">
            <p className="row__warn">
              <strong>This code is a password.</strong> It holds the key to your history: anyone who has it can read and change all your data through your relay, so give it only to your own devices, and keep a copy somewhere safe: without it and your devices, the history cannot be recovered from the relay.
            </p>
            {insecure ? (
              <p className="row__warn" data-testid={`${text.testId}-insecure`}>
                Your relay’s address is plain ws:// (not wss://), and a phone opens the app only over HTTPS: put the relay behind Tailscale Serve or Caddy, or start it with --tls-cert and --tls-key (docs/sync-relay.md), then pair.
              </p>
            ) : null}
            <div className="sync__code-row">
              <code className="sync__code" data-testid={`${text.testId}-code`}>
                {code}
              </code>
              <CopyButton text={code} label="Copy pairing code" />
            </div>
            {qr ? <img className="sync__qr" src={qr} width={220} height={220} alt={text.qrAlt} data-testid={`${text.testId}-qr`} /> : null}
            {qrError ? <p className="muted small">{qrError}</p> : null}
          </div>
        ) : null}
      </div>
    </div>
  );
}

/**
 * The QR code of `text` as an SVG data URL, shown by an <img> (the CSP allows data: images) rather
 * than as markup put into the page.
 */
async function qrImage(text: string): Promise<string> {
  const { toString } = await import('qrcode');
  // Dark on white in both themes: scanners read light-on-dark codes poorly.
  const svg = await toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color: { dark: '#000000', light: '#ffffff' } });
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
