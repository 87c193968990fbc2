import { useState, type FormEvent } from 'react';
import { api, errorMessage, idempotencyKey } from '../../api/client';
import type { Backup, BackupSettings, BackupStatus, List } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { Chip, Empty, Field, FormError, Icon, ResourceStatus, useApiForm } from '../../components/ui';
import { startAfreshAfterRestore, useApp } from '../../lib/app';
import { useNow, useResource } from '../../lib/hooks';
import { fmtDateTime, formatAge } from '../../lib/time';
import './BackupsCard.css';

const KIND_LABEL: Record<Backup['kind'], string> = {
  auto: 'daily',
  manual: 'by hand',
  'pre-migration': 'before an upgrade',
  migration: 'after an upgrade',
  'pre-restore': 'before a restore',
  'restore-source': 'restored from',
};

function formatSize(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.max(1, Math.round(bytes / 1024))} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

interface BackupsData {
  status: BackupStatus;
  settings: BackupSettings;
  list: Backup[];
}

/**
 * Integrations → Backups: the last backup and its age, a warning while backups fail, "back up
 * now", the folder and retention, and restoring a listed backup (the current data is saved first).
 */
export function BackupsCard() {
  const app = useApp();
  const tz = app.settings.timezone;
  const now = useNow(60_000);
  const data = useResource<BackupsData>(
    async (signal) => {
      const [status, settings, list] = await Promise.all([
        api.get<BackupStatus>('/v1/backups/status', undefined, signal),
        api.get<BackupSettings>('/v1/backups/settings', undefined, signal),
        api.get<List<Backup>>('/v1/backups', undefined, signal),
      ]);
      return { status, settings, list: list.data };
    },
    [],
  );
  const [busy, setBusy] = useState<string | null>(null);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);

  async function run(label: string, fn: () => Promise<string>) {
    setBusy(label);
    setResult(null);
    try {
      setResult({ ok: true, text: await fn() });
      data.reload();
    } catch (err) {
      setResult({ ok: false, text: errorMessage(err) });
      data.reload();
    } finally {
      setBusy(null);
    }
  }

  const backUpNow = () =>
    run('backup', async () => {
      const b = await api.post<Backup>('/v1/backups', {}, idempotencyKey());
      return `Backed up to ${b.path}.`;
    });

  const restore = (b: Backup) =>
    run('restore', async () => {
      await api.post<unknown>(`/v1/backups/${encodeURIComponent(b.id)}/restore`, {}, idempotencyKey());
      app.toast(`Restored the backup of ${fmtDateTime(b.created_at, tz)}. Your data from before is kept as a backup.`);
      // The service's database.restored notice does the same; this covers a stream that is down.
      startAfreshAfterRestore(600);
      return `Restored the backup of ${fmtDateTime(b.created_at, tz)}.`;
    });

  const d = data.data;
  const last = d?.status.last_backup;
  return (
    <section className="card backups" id="backups" aria-labelledby="backups-title" data-testid="backups-card">
      <header className="card__head">
        <h2 id="backups-title" tabIndex={-1}>
          Backups
        </h2>
        <div className="card__actions">
          <button type="button" className="btn btn--primary btn--small" disabled={busy !== null} onClick={() => void backUpNow()} data-testid="backup-now">
            <Icon name="download" size={15} /> Back up now
          </button>
        </div>
      </header>
      <ResourceStatus resource={data} />
      {d ? (
        <>
          {d.status.failing && d.status.last_error ? (
            <div className="row__warn backups__warning" role="alert" data-testid="backups-failing">
              <strong>Backups are failing.</strong> {d.status.last_error.message}{' '}
              <span className="muted">(last try {fmtDateTime(d.status.last_error.at, tz)}; the next one is {fmtDateTime(d.status.next_due_at, tz)})</span>
            </div>
          ) : null}
          <p className="backups__last" data-testid="backups-last">
            {last ? (
              <>
                Last backup <strong>{formatAge(Date.parse(last.created_at), now)}</strong> ({fmtDateTime(last.created_at, tz)}),{' '}
                {formatSize(last.size_bytes)}.{' '}
              </>
            ) : (
              <>No backup yet. Chyme takes one a day once there is data to protect. </>
            )}
            <span className="muted">Folder: {d.status.folder}</span>
          </p>
          <BackupSettingsForm settings={d.settings} onSaved={data.reload} />
          <h3 className="backups__subhead">Saved backups</h3>
          <p className="muted small">Restoring one replaces your data with it; what you have now is saved first, as a backup you can restore in turn.</p>
          {d.list.length === 0 ? (
            <Empty>None yet.</Empty>
          ) : (
            <ul className="backups__list" aria-label="Saved backups">
              {d.list.slice(0, 12).map((b) => (
                <li key={b.id} className="backups__item">
                  <span>
                    {fmtDateTime(b.created_at, tz)} <Chip>{KIND_LABEL[b.kind]}</Chip> <span className="muted">{formatSize(b.size_bytes)}</span>
                  </span>
                  <ConfirmButton label="Restore…" confirmLabel="Replace my data with this backup" onConfirm={() => void restore(b)} />
                </li>
              ))}
            </ul>
          )}
        </>
      ) : null}
      {busy ? <p role="status" className="muted">{busy === 'restore' ? 'Restoring…' : 'Backing up…'}</p> : null}
      {result ? (
        <p className={`test-result ${result.ok ? 'is-ok' : 'is-bad'}`} role="status" data-testid="backup-result">
          {result.text}
        </p>
      ) : null}
    </section>
  );
}

function BackupSettingsForm({ settings, onSaved }: { settings: BackupSettings; onSaved: () => void }) {
  const app = useApp();
  const [form, setForm] = useState({ folder: settings.folder, keep_daily: String(settings.keep_daily), keep_weekly: String(settings.keep_weekly) });
  const { errors, busy, send } = useApiForm((p) => p in form);

  async function save(e: FormEvent) {
    e.preventDefault();
    await send(async () => {
      const folder = form.folder.trim();
      await api.patch<BackupSettings>('/v1/backups/settings', {
        folder: folder === '' || folder === settings.default_folder ? null : folder,
        keep_daily: Number(form.keep_daily),
        keep_weekly: Number(form.keep_weekly),
      });
      app.toast('Backup settings saved.');
      onSaved();
    });
  }

  return (
    <form className="stack" onSubmit={save} noValidate aria-label="Backup settings">
      <FormError errors={errors} />
      <div className="grid grid--3 backups__form">
        <Field label="Backup folder" error={errors.folder} hint={`An absolute path, e.g. a USB disk or a synced folder. Empty for ${settings.default_folder}.`}>
          {({ id, describedBy, invalid }) => (
            <input id={id} type="text" className="backups__folder" value={form.folder} onChange={(e) => setForm({ ...form, folder: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} spellCheck={false} />
          )}
        </Field>
        <Field label="Daily copies kept" error={errors.keep_daily}>
          {({ id, describedBy, invalid }) => (
            <input id={id} type="text" inputMode="numeric" autoComplete="off" value={form.keep_daily} onChange={(e) => setForm({ ...form, keep_daily: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} />
          )}
        </Field>
        <Field label="Weekly copies kept" error={errors.keep_weekly}>
          {({ id, describedBy, invalid }) => (
            <input id={id} type="text" inputMode="numeric" autoComplete="off" value={form.keep_weekly} onChange={(e) => setForm({ ...form, keep_weekly: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} />
          )}
        </Field>
      </div>
      <div className="form-actions">
        <button type="submit" className="btn" disabled={busy}>
          Save backup settings
        </button>
      </div>
    </form>
  );
}
