import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { utf8Text, type InputEntry } from './input.js';
import type { WarningLog } from './records.js';
import { ImportInputError } from './types.js';

/** A CSV row by header name, with its line in the file (for warnings). */
export interface CsvRow {
  cells: Record<string, string>;
  line: number;
}

/**
 * Sniffs the delimiter from the header line only: Oura uses ';' and has unquoted JSON cells full of
 * commas, so guessing from the body would split them.
 */
export function sniffDelimiter(head: string): ',' | ';' {
  const header = head.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  const count = (ch: string) => header.split(ch).length - 1;
  return count(';') > count(',') ? ';' : ',';
}

/**
 * Streams the rows of a UTF-8 CSV (BOM stripped, CRLF or LF, headers matched exactly). A row the
 * CSV rules cannot read is a warning with its line; the rest of the file is read.
 */
export async function* csvRows(entry: InputEntry, delimiter: ',' | ';', warnings: WarningLog): AsyncGenerator<CsvRow> {
  const csv = parse({
    columns: true,
    bom: true,
    delimiter,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    info: true,
  });
  csv.on('skip', (err: Error & { lines?: number }) => warnings.add(entry.name, err.lines ?? null, `This row could not be read as CSV (${err.message}); it was skipped.`));
  const source = Readable.from(utf8Text(await entry.open(), entry.name));
  // Errors of the text stream (not UTF-8, a damaged archive) reach the parser as they are.
  source.on('error', (err) => csv.destroy(err));
  source.pipe(csv);
  try {
    for await (const item of csv as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      yield { cells: item.record, line: item.info.lines };
    }
  } catch (err) {
    if (err instanceof ImportInputError) throw err;
    throw new ImportInputError(`${entry.name} could not be read as CSV: ${(err as Error).message}.`);
  }
}
