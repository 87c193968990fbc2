import { useState, type FormEvent } from 'react';
import { idempotencyKey } from '../../api/client';
import { createApiKey } from '../../api/keys';
import { getMcpServer } from '../../api/mcp';
import { type ApiKey, type McpServer, type Scope } from '../../api/types';
import { ScopeChecks } from '../../components/ScopeChecks';
import { CopyButton } from '../../components/CopyButton';
import { Secret } from '../../components/Secret';
import { Field, FormError, ResourceStatus, useApiForm } from '../../components/ui';
import { useResource } from '../../lib/hooks';

/** The scopes an assistant's tools use (docs/mcp.md): reading and logging meals, scores and state, logging sleep. */
const ASSISTANT_SCOPES: Scope[] = ['nutrition:read', 'nutrition:write', 'digestion:read', 'sleep:write'];
const DEFAULT_SCOPES: Scope[] = ['nutrition:read', 'nutrition:write', 'digestion:read'];
const KEY_PLACEHOLDER = 'chy_YOUR_KEY';

interface Snippet {
  id: string;
  client: string;
  where: string;
  text: string;
}

/** The configuration each common client needs, with the key filled in once one was made here. */
function snippets(server: McpServer, key: string): Snippet[] {
  const desktop = {
    mcpServers: { chyme: { command: server.stdio.command, args: server.stdio.args, env: { CHYME_API_KEY: key } } },
  };
  const vscode = { servers: { chyme: { type: 'http', url: server.url, headers: { Authorization: `Bearer ${key}` } } } };
  return [
    {
      id: 'claude-desktop',
      client: 'Claude Desktop',
      where: 'Add to claude_desktop_config.json (Settings → Developer → Edit Config), then restart Claude Desktop.',
      text: JSON.stringify(desktop, null, 2),
    },
    {
      id: 'claude-code',
      client: 'Claude Code',
      where: 'Run in a terminal.',
      text: `claude mcp add --transport http chyme ${server.url} --header "Authorization: Bearer ${key}"`,
    },
    {
      id: 'vscode',
      client: 'VS Code',
      where: 'Add to .vscode/mcp.json (or your user mcp.json). Keep it out of version control: it holds the key.',
      text: JSON.stringify(vscode, null, 2),
    },
  ];
}

/** Integrations → AI assistants: the /mcp address, a key for an assistant, and each client's configuration. */
export function AssistantsCard({ onKeyCreated }: { onKeyCreated?: () => void }) {
  const server = useResource((signal) => getMcpServer(signal), []);
  const [name, setName] = useState('AI assistant');
  const [scopes, setScopes] = useState<Scope[]>(DEFAULT_SCOPES);
  const { errors, busy, send } = useApiForm((p) => p === 'name' || p.startsWith('scopes'));
  const [created, setCreated] = useState<ApiKey | null>(null);

  async function create(e: FormEvent) {
    e.preventDefault();
    await send(async () => {
      setCreated(await createApiKey({ name: name.trim(), scopes }, idempotencyKey()));
      onKeyCreated?.();
    });
  }

  const scopeError = Object.entries(errors).find(([k]) => k.startsWith('scopes'))?.[1];
  const key = created?.secret ?? KEY_PLACEHOLDER;
  return (
    <section className="card" id="assistants" aria-labelledby="assistants-title">
      <header className="card__head">
        <h2 id="assistants-title" tabIndex={-1}>
          AI assistants
        </h2>
      </header>
      <p className="muted">
        Let your own assistant (Claude, VS Code, Cursor or any MCP client) read and log meals through Chyme. Your data stays on this computer: the
        assistant’s model sees only what it asks Chyme for.
      </p>
      <ResourceStatus resource={server} />
      {server.data ? (
        <p className="muted">
          MCP address <code data-testid="mcp-url">{server.data.url}</code> <CopyButton text={server.data.url} label="Copy MCP address" />
        </p>
      ) : null}
      <form className="stack" onSubmit={create} noValidate aria-label="Create a key for an assistant">
        <FormError errors={errors} />
        <Field label="Assistant" error={errors.name} hint="A name for the key, e.g. “Claude Desktop”.">
          {({ id, describedBy, invalid }) => (
            <input id={id} type="text" value={name} onChange={(e) => setName(e.target.value)} aria-describedby={describedBy} aria-invalid={invalid} autoComplete="off" />
          )}
        </Field>
        <ScopeChecks legend="What the assistant may do" offered={ASSISTANT_SCOPES} scopes={scopes} setScopes={setScopes} error={scopeError} />
        <div className="form-actions">
          <button type="submit" className="btn btn--primary" disabled={busy}>
            Create key for the assistant
          </button>
        </div>
      </form>
      {created?.secret ? <Secret title={`Key for “${created.name}”`} secret={created.secret} kept="Chyme keeps only a hash of it, so it cannot show it again; the snippets below carry it." /> : null}
      {server.data ? (
        <div className="stack" data-testid="mcp-snippets">
          <p className="small muted">
            {created?.secret ? 'The configurations below hold the new key.' : `Create a key above and it replaces ${KEY_PLACEHOLDER} below.`} Chyme must be running (the app, or
            chyme serve) while the assistant uses it.
          </p>
          {snippets(server.data, key).map((s) => (
            <div key={s.id} className="stack" data-testid={`snippet-${s.id}`}>
              <h3 className="sub-title" id={`snippet-${s.id}-title`}>
                {s.client}
              </h3>
              <p className="small muted">{s.where}</p>
              <pre className="code" aria-labelledby={`snippet-${s.id}-title`} tabIndex={0}>
                {s.text}
              </pre>
              <div>
                <CopyButton text={s.text} label={`Copy the ${s.client} configuration`} />
              </div>
            </div>
          ))}
        </div>
      ) : null}
    </section>
  );
}
