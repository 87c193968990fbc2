import { resolve } from 'node:path';
import { BackupError } from '../../backups/index.js';
import { backupFolder } from '../../backups/settings.js';
import { writeBackup } from '../../backups/write.js';
import { withExistingDatabase } from '../context.js';
import { CommandFailed, dbPathFrom, EXIT, parseFlags, type Command } from '../usage.js';

export const backupCommand: Command = {
  name: 'backup',
  usage: ['chyme backup [--to DIR] [--db FILE]'],
  run: backup,
};

/** `chyme backup`: one checked backup now, into the backup folder (or --to DIR); its path is the last line. */
async function backup(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, { to: { type: 'string' }, db: { type: 'string' } });
  const dbPath = dbPathFrom(values);
  await withExistingDatabase(dbPath, async (db) => {
    const dir = values.to !== undefined ? resolve(values.to) : backupFolder(db, dbPath);
    try {
      const file = await writeBackup(db, dir, 'manual', Date.now());
      process.stdout.write(`Backed up ${dbPath} (${file.sizeBytes} bytes, integrity check ok) to:\n${file.path}\n`);
    } catch (err) {
      if (err instanceof BackupError) throw new CommandFailed(err.message, EXIT.failed);
      throw err;
    }
  });
}
