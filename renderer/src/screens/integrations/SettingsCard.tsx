import { useMemo, useState, type FormEvent } from 'react';
import { updateSettings } from '../../api/settings';
import type { Settings } from '../../api/types';
import { Field, FormError, TimeZoneOptions, useApiForm } from '../../components/ui';
import { useApp } from '../../lib/app';
import { useResource } from '../../lib/hooks';
import { timeZoneNames } from '../../lib/time';

export function SettingsCard() {
  const app = useApp();
  const zones = useMemo(() => timeZoneNames(app.settings.timezone), [app.settings.timezone]);
  const [form, setForm] = useState({ timezone: app.settings.timezone, day_start: app.settings.day_start, units: app.settings.units });
  const { errors, busy, send } = useApiForm((p) => p in form);
  const unitOptions = Array.from(new Set([app.settings.units, 'metric', 'imperial']));

  async function save(e: FormEvent) {
    e.preventDefault();
    await send(async () => {
      const s = await updateSettings(form);
      app.setSettings(s);
      app.toast('Settings saved. Scores and days are recomputed for them.');
    });
  }

  return (
    <section className="card" id="settings" aria-labelledby="settings-title">
      <header className="card__head">
        <h2 id="settings-title" tabIndex={-1}>
          Settings
        </h2>
      </header>
      <form className="stack" onSubmit={save} noValidate aria-label="Settings">
        <FormError errors={errors} />
        <div className="grid grid--3">
          <Field label="Time zone" error={errors.timezone}>
            {({ id, describedBy, invalid }) => (
              <select id={id} value={form.timezone} onChange={(e) => setForm({ ...form, timezone: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid}>
                <TimeZoneOptions zones={zones} />
              </select>
            )}
          </Field>
          <Field label="Day starts at" error={errors.day_start} hint="Meals before it count for the previous day.">
            {({ id, describedBy, invalid }) => (
              <input id={id} type="time" value={form.day_start} onChange={(e) => setForm({ ...form, day_start: e.target.value })} aria-describedby={describedBy} aria-invalid={invalid} />
            )}
          </Field>
          <Field label="Units" error={errors.units} hint="Stored for integrations; nutrition shows kcal, g and mg either way.">
            {({ id, describedBy, invalid }) => (
              <select id={id} value={form.units} onChange={(e) => setForm({ ...form, units: e.target.value as Settings['units'] })} aria-describedby={describedBy} aria-invalid={invalid}>
                {unitOptions.map((u) => (
                  <option key={u} value={u}>
                    {u[0]!.toUpperCase() + u.slice(1)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={busy}>
            Save settings
          </button>
        </div>
      </form>
      {window.chyme ? <NotificationPrefs /> : null}
    </section>
  );
}

/** Desktop only: which state changes raise a native notification. */
function NotificationPrefs() {
  const bridge = window.chyme!;
  const prefs = useResource(() => bridge.getNotificationPrefs(), []);
  const [saving, setSaving] = useState(false);
  if (!prefs.data) return null;
  const current = prefs.data;
  const toggle = async (k: keyof ChymeNotificationPrefs) => {
    setSaving(true);
    try {
      await bridge.setNotificationPrefs({ ...current, [k]: !current[k] });
      prefs.reload();
    } finally {
      setSaving(false);
    }
  };
  return (
    <fieldset className="checks" disabled={saving}>
      <legend>Desktop notifications when digestion becomes…</legend>
      {(['processing', 'settling', 'fasted'] as const).map((k) => (
        <label key={k} className="check">
          <input type="checkbox" checked={current[k]} onChange={() => void toggle(k)} />
          <span>{k[0]!.toUpperCase() + k.slice(1)}</span>
        </label>
      ))}
    </fieldset>
  );
}
