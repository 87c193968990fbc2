import { useRef, useState } from 'react';
import { errorMessage, idempotencyKey } from '../../api/client';
import { exportAll, exportMealsCsv, importAll } from '../../api/data';
import { Icon, Loading } from '../../components/ui';
import { useApp } from '../../lib/app';

/** Saves a file the service sends (an export) under its own name, or `fallbackName`. */
async function download(fetchFile: () => Promise<{ blob: Blob; filename: string | null }>, fallbackName: string) {
  const { blob, filename } = await fetchFile();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = filename ?? fallbackName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

interface ImportResult {
  object: 'import_result';
  meals: { imported: number; skipped: number };
  sleep_sessions: { imported: number; skipped: number };
  settings: 'applied' | 'kept';
}

function summarize(r: ImportResult): string {
  const part = (n: { imported: number; skipped: number }, what: string) =>
    `${n.imported} ${what} imported${n.skipped ? `, ${n.skipped} already here (skipped)` : ''}`;
  return `${part(r.meals, 'meals')}; ${part(r.sleep_sessions, 'sleep sessions')}. Settings ${r.settings === 'applied' ? 'restored' : 'kept as they are'}.`;
}

export function DataCard() {
  const app = useApp();
  const fileRef = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const stamp = app.today;

  async function run(label: string, fn: () => Promise<void>) {
    setBusy(label);
    try {
      await fn();
    } catch (err) {
      setResult({ ok: false, text: errorMessage(err) });
    } finally {
      setBusy(null);
    }
  }

  async function importFile(file: File) {
    await run('import', async () => {
      let doc: unknown;
      try {
        doc = JSON.parse(await file.text());
      } catch {
        setResult({ ok: false, text: `${file.name} is not JSON. Choose a file made by “Export everything”.` });
        return;
      }
      const res = await importAll(doc, idempotencyKey());
      setResult({ ok: true, text: `Imported ${file.name}. ${summarize(res)}` });
    });
    if (fileRef.current) fileRef.current.value = '';
  }

  return (
    <section className="card" id="data" aria-labelledby="data-title">
      <header className="card__head">
        <h2 id="data-title" tabIndex={-1}>
          Export &amp; import
        </h2>
      </header>
      <p className="muted">Your data is one file on this machine. Take it with you any time.</p>
      <div className="button-row">
        <button type="button" className="btn" disabled={busy !== null} onClick={() => void run('json', () => download(exportAll, `chyme-export-${stamp}.json`))} data-testid="export-json">
          <Icon name="download" size={16} /> Export everything (JSON)
        </button>
        <button type="button" className="btn" disabled={busy !== null} onClick={() => void run('csv', () => download(exportMealsCsv, `chyme-meals-${stamp}.csv`))} data-testid="export-csv">
          <Icon name="download" size={16} /> Meals as CSV
        </button>
      </div>
      <div className="field">
        <label htmlFor="import-file">Import a JSON export</label>
        <input
          id="import-file"
          ref={fileRef}
          type="file"
          accept="application/json,.json"
          disabled={busy !== null}
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) void importFile(f);
          }}
          aria-describedby="import-hint"
        />
        <p className="field__hint" id="import-hint">
          Everything is checked before anything is written; records that already exist are skipped.
        </p>
      </div>
      {busy ? <Loading label={busy === 'import' ? 'Importing' : 'Preparing download'} /> : null}
      {result ? (
        <p className={`test-result ${result.ok ? 'is-ok' : 'is-bad'}`} role="status" data-testid="import-result">
          {result.text}
        </p>
      ) : null}
    </section>
  );
}
