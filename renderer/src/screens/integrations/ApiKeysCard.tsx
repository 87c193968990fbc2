import { useState, type FormEvent } from 'react';
import { errorMessage, idempotencyKey } from '../../api/client';
import { createApiKey, listApiKeys, revokeApiKey } from '../../api/keys';
import { SCOPES, type ApiKey, type Scope } from '../../api/types';
import { ConfirmButton } from '../../components/ConfirmButton';
import { CopyButton } from '../../components/CopyButton';
import { Secret } from '../../components/Secret';
import { Chip, Empty, Field, FormError, ResourceStatus, useApiForm } from '../../components/ui';
import { ScopeChecks } from '../../components/ScopeChecks';
import { useApp } from '../../lib/app';
import { useResource } from '../../lib/hooks';
import { fmtDateTime } from '../../lib/time';

const baseUrl = () => new URL('./v1', location.href).href;

/** `version` changes when a key was made elsewhere on the screen (the AI assistants card): the list reloads. */
export function ApiKeysCard({ version = 0 }: { version?: number }) {
  const app = useApp();
  const keys = useResource((signal) => listApiKeys(signal), [version]);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['nutrition:read', 'digestion:read']);
  const { errors, busy, send } = useApiForm((p) => p === 'name' || p.startsWith('scopes'));
  const [created, setCreated] = useState<ApiKey | null>(null);

  async function create(e: FormEvent) {
    e.preventDefault();
    await send(async () => {
      const k = await createApiKey({ name: name.trim(), scopes }, idempotencyKey());
      setCreated(k);
      setName('');
      keys.reload();
    });
  }

  async function revoke(k: ApiKey) {
    try {
      await revokeApiKey(k.id);
      keys.reload();
      app.toast(`Revoked “${k.name}”. Requests with it now fail.`);
    } catch (err) {
      app.toast(errorMessage(err), { tone: 'error' });
    }
  }

  const scopeError = Object.entries(errors).find(([k]) => k.startsWith('scopes'))?.[1];
  const curlPath = created?.scopes.includes('digestion:read') || !created ? '/digestion/state' : '/nutrition/meals?start_date=2025-01-01&end_date=2025-01-07';
  return (
    <section className="card" id="keys" aria-labelledby="keys-title">
      <header className="card__head">
        <h2 id="keys-title" tabIndex={-1}>
          API keys
        </h2>
      </header>
      <p className="muted">
        Base URL <code data-testid="base-url">{baseUrl()}</code> <CopyButton text={baseUrl()} label="Copy base URL" />
      </p>
      {created?.secret ? (
        <Secret title={`New key “${created.name}”`} secret={created.secret} kept="Chyme keeps only a hash of it, so it cannot show it again.">
          <p className="small">Try it:</p>
          <pre className="code" data-testid="curl-example">{`curl -H "Authorization: Bearer ${created.secret}" \\\n  ${baseUrl()}${curlPath}`}</pre>
          <button type="button" className="btn btn--small" onClick={() => setCreated(null)}>
            I’ve stored it
          </button>
        </Secret>
      ) : (
        <pre className="code">{`curl -H "Authorization: Bearer chy_…" \\\n  ${baseUrl()}/digestion/state`}</pre>
      )}
      <form className="stack" onSubmit={create} noValidate aria-label="Create an API key">
        <FormError errors={errors} />
        <Field label="Key name" error={errors.name} hint="Where it will be used, e.g. “Home Assistant”.">
          {({ id, describedBy, invalid }) => (
            <input id={id} type="text" value={name} onChange={(e) => setName(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
          )}
        </Field>
        <ScopeChecks legend="Scopes" offered={SCOPES} scopes={scopes} setScopes={setScopes} error={scopeError} />
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={busy}>
            Create key
          </button>
        </div>
      </form>
      <h3 className="sub-title">Your keys</h3>
      <ResourceStatus resource={keys} />
      {keys.data ? (
        keys.data.data.length ? (
          <ul className="rows" data-testid="api-keys">
            {keys.data.data.map((k) => (
              <li key={k.id} className="row">
                <div className="row__main">
                  <p className="row__title">
                    {k.name} <code className="muted">{k.prefix}…</code>
                  </p>
                  <p className="row__meta">
                    {k.scopes.map((s) => (
                      <Chip key={s}>{s}</Chip>
                    ))}
                  </p>
                  <p className="row__meta muted small">
                    Created {fmtDateTime(k.created_at, app.tz)} · {k.last_used_at ? `last used ${fmtDateTime(k.last_used_at, app.tz)}` : 'never used'}
                  </p>
                </div>
                <ConfirmButton label="Revoke" confirmLabel={`Revoke ${k.name}`} onConfirm={() => void revoke(k)} />
              </li>
            ))}
          </ul>
        ) : (
          <Empty>No keys yet.</Empty>
        )
      ) : null}
    </section>
  );
}
