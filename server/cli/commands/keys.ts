import { apiKeyResource, createApiKey } from '../../auth/keys.js';
import { openCommandDatabase } from '../context.js';
import { getApiKey, listApiKeys, revokeApiKey } from '../../db/api-keys.js';
import { isScope, SCOPES, type Scope } from '../../auth/scopes.js';
import { isoUtc } from '../../time/tz.js';
import { dbPathFrom, fail, parseFlags, type Command } from '../usage.js';

function parseScopes(raw: string): Scope[] {
  if (raw.trim() === 'all') return [...SCOPES];
  const scopes = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (scopes.length === 0) fail('--scopes must name at least one scope');
  for (const s of scopes) if (!isScope(s)) fail(`unknown scope "${s}"; known scopes: ${SCOPES.join(', ')}, or "all"`);
  return scopes as Scope[];
}

export const keysCommand: Command = {
  name: 'keys',
  usage: [
    'chyme keys create --name NAME --scopes a,b|all [--db FILE]',
    'chyme keys list [--json] [--db FILE]',
    'chyme keys revoke ID [--db FILE]',
  ],
  run: keys,
};

/** `chyme keys create|list|revoke`: API keys, straight in the database (works beside a running server). */
function keys(argv: string[]): void {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseFlags(
    rest,
    { name: { type: 'string' }, scopes: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' } },
    true,
  );
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke') fail(`unknown keys command "${sub ?? ''}"; use keys create, keys list or keys revoke`);
  // Only create makes a database; list and revoke read one that must be there.
  const db = openCommandDatabase(dbPathFrom(values), { create: sub === 'create' });
  try {
    switch (sub) {
      case 'create': {
        const name = values.name?.trim();
        if (!name) fail('keys create needs --name NAME');
        if (name.length > 100) fail('--name must be at most 100 characters');
        if (values.scopes === undefined) fail('keys create needs --scopes a,b (or --scopes all)');
        const { key, secret } = createApiKey(db, { name, scopes: parseScopes(values.scopes), nowMs: Date.now() });
        process.stdout.write(`Created API key ${key.id} "${key.name}" with scopes ${key.scopes.join(', ')}.\n`);
        process.stdout.write('This secret is shown once; store it now:\n');
        process.stdout.write(`${secret}\n`);
        return;
      }
      case 'list': {
        const list = listApiKeys(db);
        if (values.json) {
          const out = list.map((k) => apiKeyResource(k));
          process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
          return;
        }
        if (list.length === 0) {
          process.stdout.write('No API keys. Create one with: chyme keys create --name NAME --scopes nutrition:read\n');
          return;
        }
        for (const k of list) {
          const used = k.lastUsedMs === null ? 'never used' : `last used ${isoUtc(k.lastUsedMs)}`;
          process.stdout.write(`${k.id}  ${k.prefix}…  ${k.name}  [${k.scopes.join(', ')}]  created ${isoUtc(k.createdMs)}, ${used}\n`);
        }
        return;
      }
      case 'revoke': {
        const id = positionals[0];
        if (!id) fail('keys revoke needs the key id, e.g. chyme keys revoke key_…');
        const key = getApiKey(db, id);
        if (!key || key.internal) fail(`no API key with id ${id}`);
        if (!revokeApiKey(db, id, Date.now())) fail(`API key ${id} was already revoked`);
        process.stdout.write(`Revoked API key ${id} "${key.name}".\n`);
        return;
      }
    }
  } finally {
    db.close();
  }
}
