import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { ImportInputError } from './types.js';

/**
 * The files an import reads: plain files and the entries of zip archives, each opened as a stream
 * when its turn comes (never extracted to disk, never read whole).
 */

/** An export.xml of ten years is ~3 GB; anything past this is not an export. */
export const MAX_XML_ENTRY_BYTES = 16 * 1024 ** 3;
/** CSV and JSON exports are megabytes; past this a file is refused rather than read. */
export const MAX_TEXT_ENTRY_BYTES = 512 * 1024 ** 2;

export interface InputEntry {
  /** What warnings and errors call it: the file name, or archive.zip:path/inside. */
  name: string;
  /** The base name inside its folder or archive (Profile.csv). */
  baseName: string;
  size: number;
  inZip: boolean;
  open(): Promise<Readable>;
}

export interface InputSet {
  entries: InputEntry[];
  close(): void;
}

/** Entries that are never exports: media and routes inside an Apple or Takeout archive. */
const SKIPPED_ENTRY = /(^|\/)(__MACOSX\/|\._)|\.(gpx|pdf|png|jpe?g|heic|gif|mp4|m4a|mov|dcm|zip)$/i;

async function isZip(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    return bytesRead === 4 && head[0] === 0x50 && head[1] === 0x4b && (head[2] === 0x03 || head[2] === 0x05) && (head[3] === 0x04 || head[3] === 0x06);
  } finally {
    await handle.close();
  }
}

function openZip(path: string, display: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false }, (err, zip) => {
      if (err || !zip) {
        reject(
          new ImportInputError(
            `${display} is not a complete zip archive (${err?.message ?? 'unreadable'}): it may have been cut short while downloading. Download the export again.`,
          ),
        );
      } else resolve(zip);
    });
  });
}

async function zipEntries(path: string, display: string): Promise<{ entries: InputEntry[]; zip: yauzl.ZipFile }> {
  const zip = await openZip(path, display);
  const entries: InputEntry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      const name = entry.fileName;
      if (!name.endsWith('/') && !SKIPPED_ENTRY.test(name)) {
        entries.push({
          name: `${display}:${name}`,
          baseName: name.slice(name.lastIndexOf('/') + 1),
          size: entry.uncompressedSize,
          inZip: true,
          open: () =>
            new Promise<Readable>((res, rej) =>
              zip.openReadStream(entry, (e, stream) =>
                e || !stream ? rej(new ImportInputError(`${display}:${name} cannot be read from the archive (${e?.message ?? 'no data'}).`)) : res(stream),
              ),
            ),
        });
      }
      zip.readEntry();
    });
    zip.on('end', () => resolve());
    zip.on('error', (err: Error) =>
      reject(new ImportInputError(`${display} is a damaged zip archive (${err.message}). Download the export again.`)),
    );
    zip.readEntry();
  });
  return { entries, zip };
}

/** Lists every entry of the given paths (zip archives are opened, not extracted). */
export async function openInputs(paths: readonly { path: string; name?: string }[]): Promise<InputSet> {
  const entries: InputEntry[] = [];
  const zips: yauzl.ZipFile[] = [];
  const close = () => zips.forEach((z) => z.close());
  try {
    for (const input of paths) {
      const display = input.name ?? basename(input.path);
      let info;
      try {
        info = await stat(input.path);
      } catch {
        throw new ImportInputError(`${display} does not exist or cannot be read.`);
      }
      if (!info.isFile()) throw new ImportInputError(`${display} is not a file (folders are not read: pass the export's files or its zip).`);
      if (await isZip(input.path)) {
        const { entries: inner, zip } = await zipEntries(input.path, display);
        zips.push(zip);
        entries.push(...inner);
      } else {
        entries.push({
          name: display,
          baseName: display.slice(display.lastIndexOf('/') + 1),
          size: info.size,
          inZip: false,
          open: async () => createReadStream(input.path, { highWaterMark: 256 * 1024 }),
        });
      }
    }
  } catch (err) {
    close();
    throw err;
  }
  return { entries, close };
}

/**
 * Decodes a byte stream as UTF-8 (a leading byte-order mark dropped), refusing anything else with
 * a sentence instead of reading mojibake into a person's history. `onBytes` counts the bytes read
 * (progress is measured against the files' sizes in bytes, not in characters).
 */
export async function* utf8Text(stream: Readable, name: string, onBytes: (bytes: number) => void = () => {}): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  let first = true;
  const chunks = (async function* () {
    try {
      yield* stream as AsyncIterable<Buffer>;
    } catch (err) {
      throw damaged(name, err);
    }
  })();
  try {
    for await (const chunk of chunks) {
      if (first && chunk.length >= 2 && ((chunk[0] === 0xff && chunk[1] === 0xfe) || (chunk[0] === 0xfe && chunk[1] === 0xff))) {
        throw new ImportInputError(`${name} is UTF-16 text; Chyme reads UTF-8. Export it again, or save it as UTF-8.`);
      }
      first = false;
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        throw new ImportInputError(`${name} is not UTF-8 text (an invalid byte near offset ${offset}); Chyme reads UTF-8 exports. Save it as UTF-8 and import it again.`);
      }
      offset += chunk.length;
      onBytes(chunk.length);
      if (text) yield text;
    }
    let tail: string;
    try {
      tail = decoder.decode();
    } catch {
      throw new ImportInputError(`${name} is not UTF-8 text (it ends inside a character); Chyme reads UTF-8 exports.`);
    }
    if (tail) yield tail;
  } finally {
    stream.destroy();
  }
}

/** A read error (a damaged archive entry, a vanished file) as a sentence. */
function damaged(name: string, err: unknown): ImportInputError {
  return err instanceof ImportInputError
    ? err
    : new ImportInputError(`${name} could not be read (${(err as Error)?.message ?? String(err)}): the file or its archive is damaged. Download the export again.`);
}

/** The first few kilobytes of an entry as text (for detection), or null for binary data. */
export async function readHead(entry: InputEntry, bytes = 8192): Promise<string | null> {
  const stream = await entry.open();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= bytes) break;
    }
  } catch (err) {
    throw damaged(entry.name, err);
  } finally {
    stream.destroy();
  }
  const head = Buffer.concat(chunks).subarray(0, bytes);
  if (head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) return null;
  try {
    // stream: true tolerates a character cut at the end of the head.
    return new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true }).replace(/^\uFEFF/, '');
  } catch {
    return null;
  }
}

/** The whole entry as text (small CSV and JSON files only; the size was checked). */
export async function readText(entry: InputEntry): Promise<string> {
  let out = '';
  for await (const text of utf8Text(await entry.open(), entry.name)) out += text;
  return out;
}
