import { join } from 'node:path';
import { defaultDataDir } from '../../paths.js';
import { PHONE_APP_PATH } from '../../sync/pairing-url.js';
import { DEFAULT_RELAY_HOST, DEFAULT_RELAY_PORT } from '../../sync/relay-defaults.js';
import { RELAY_DB_FILE } from '../../sync/relay-store.js';
import { CommandFailed, EXIT, fail, parseFlags, type Command } from '../usage.js';

export const relayCommand: Command = {
  name: 'relay',
  usage: [
    `chyme relay [--port P] [--host H] [--data DIR] [--token T] [--tls-cert FILE --tls-key FILE]`,
    `    a sync relay for your devices, and the phone app at /app/ (docs/sync-relay.md): port ${DEFAULT_RELAY_PORT}, host ${DEFAULT_RELAY_HOST}, data ${join(defaultDataDir(), 'relay')};`,
    `    the token is --token, else $CHYME_RELAY_TOKEN, else DIR/relay-token (made on first start); with --tls-cert and --tls-key (PEM) it serves HTTPS and wss:// itself`,
  ],
  run: relay,
};

/**
 * `chyme relay`: the sync relay, until SIGINT/SIGTERM. stdout carries exactly two lines, the
 * address and the token, for a person to copy or a script to read; the log goes to stderr and
 * never holds the token.
 */
async function relay(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    data: { type: 'string' },
    token: { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
  });
  const port = values.port === undefined ? DEFAULT_RELAY_PORT : Number(values.port);
  if (!/^\d+$/.test(values.port ?? '0') || !Number.isInteger(port) || port > 65535) fail(`--port must be an integer from 0 to 65535, not ${values.port}`);
  const host = values.host ?? DEFAULT_RELAY_HOST;
  if (host.trim() === '') fail('--host must be a host name or an IP address, such as 0.0.0.0');
  if (values.data !== undefined && values.data.trim() === '') fail('--data must name a folder');
  const dataDir = values.data ?? join(defaultDataDir(), 'relay');
  const certFile = values['tls-cert'];
  const keyFile = values['tls-key'];
  if ((certFile === undefined) !== (keyFile === undefined)) fail('--tls-cert and --tls-key go together: the certificate and its private key, as PEM files');
  if (certFile?.trim() === '' || keyFile?.trim() === '') fail('--tls-cert and --tls-key must name files');
  const tls = certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined;
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

  // Loaded here, not with the CLI: the relay (ws, https, the phone app's compression) is no part of
  // any other command's start.
  const relayModule = await import('../../sync/relay.js');
  let started;
  try {
    started = await relayModule.startRelay({ host, port, dataDir, log, ...(values.token !== undefined ? { token: values.token } : {}), ...(tls ? { tls } : {}) });
  } catch (err) {
    throw startFailure(relayModule, err, host, port, dataDir);
  }
  const running = started;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`received ${signal}; closing connections and the store`);
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`chyme: the relay did not close cleanly: ${(err as Error)?.message ?? String(err)}\n`);
        process.exit(EXIT.unexpected);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // The ready lines come last: once a caller has seen them, a signal already stops the relay cleanly.
  process.stdout.write(`Chyme relay listening on ${running.url}\nToken: ${running.token}\n`);
  log(`sealed chunks in ${join(dataDir, RELAY_DB_FILE)}; the phone app at ${running.url.replace(/^ws/, 'http')}${PHONE_APP_PATH}`);
}

/** Why the relay could not start, as the CLI's one sentence and exit status. */
function startFailure(relayModule: typeof import('../../sync/relay.js'), err: unknown, host: string, port: number, dataDir: string): Error {
  if (err instanceof relayModule.RelayConfigError) return new CommandFailed(err.message, EXIT.usage);
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'EADDRINUSE':
      return new CommandFailed(`Port ${port} on ${host} is in use: is a relay already running? Pick another --port, or --port 0 for a free one.`, EXIT.portInUse);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new CommandFailed(`Cannot listen on ${host}: it is not an address of this machine (${e.code}). Use 0.0.0.0 for every address, or 127.0.0.1.`, EXIT.usage);
    case 'EACCES':
      if (e.syscall === 'listen') return new CommandFailed(`Port ${port} needs privileges on this system; pick a port above 1023.`, EXIT.failed);
      return new CommandFailed(`Cannot use ${dataDir}: ${e.message}. Make the folder writable, or pick another --data.`, EXIT.failed);
    case 'EEXIST':
      // The token file appeared between the read and the write: another relay on the same folder.
      return new CommandFailed(`${relayModule.relayTokenPath(dataDir)} was created by another process while this one started; is another relay using ${dataDir}?`, EXIT.failed);
  }
  if (typeof e?.code === 'string' && e.syscall !== undefined) return new CommandFailed(`Cannot use ${dataDir}: ${e.message}. Check --data.`, EXIT.failed);
  return err instanceof Error ? err : new Error(String(err));
}
