import { relaxedCommit, type Db } from '../db/connection.js';
import { deleteServiceState, readServiceState, writeServiceState } from '../db/service-state.js';

/**
 * Where the service running on a database can be reached. The service records it at start and
 * removes it at a clean stop; the CLI (`chyme link`, `chyme restore`) reads it from the shared
 * database to find the running server, and trusts it only while that process is alive.
 */
export interface ServerInstance {
  url: string;
  pid: number;
  startedMs: number;
}

const KEY = 'server.instance';

/** A second server on one database would deliver every webhook twice and race the first one's timers. */
export class ServerAlreadyRunningError extends Error {
  constructor(readonly dbPath: string, readonly instance: ServerInstance) {
    super(`Chyme is already running on ${dbPath} at ${instance.url} (pid ${instance.pid}); use that one, or stop it first.`);
    this.name = 'ServerAlreadyRunningError';
  }
}

export function recordServerInstance(db: Db, url: string, nowMs: number): void {
  // Not waiting for the disk (it is on every start's path): a power cut that undoes the record
  // ends the server it names too.
  relaxedCommit(db, () => writeServiceState(db, KEY, { url, pid: process.pid, startedMs: nowMs } satisfies ServerInstance));
}

export function clearServerInstance(db: Db, url: string): void {
  try {
    const current = readServiceState<ServerInstance>(db, KEY);
    if (current?.url === url && current.pid === process.pid) deleteServiceState(db, KEY);
  } catch {
    // a database that cannot be written any more keeps the record; the pid check ignores it
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but another user's process.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the recorded server is there. A process id alone can mislead: after a crash and a
 * reboot the recorded id may belong to some other program, so the server must answer at its URL.
 * One that is slower than `timeoutMs` (a loaded machine, a long request) still counts as there:
 * only a refused connection or an answer that is not a healthy Chyme shows it gone, because
 * writing to a database a live server holds open is what this check exists to prevent.
 */
export async function serverAnswers(instance: ServerInstance, timeoutMs = 3000): Promise<boolean> {
  try {
    const res = await fetch(`${instance.url}/v1/health`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.ok;
  } catch (err) {
    return (err as Error)?.name === 'TimeoutError';
  }
}

/** The running server on this database, or undefined when none is (or it died without cleaning up). */
export function runningServer(db: Db): ServerInstance | undefined {
  const instance = readServiceState<ServerInstance>(db, KEY);
  return instance && isAlive(instance.pid) ? instance : undefined;
}
