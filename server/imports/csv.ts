import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { utf8Text, type InputEntry } from './input.js';

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

/** Streams the rows of a UTF-8 CSV (BOM stripped, CRLF or LF, headers matched exactly). */
export async function* csvRows(entry: InputEntry, delimiter: ',' | ';'): AsyncGenerator<CsvRow> {
  const parser = Readable.from(utf8Text(await entry.open(), entry.name)).pipe(
    parse({ columns: true, bom: true, delimiter, relax_quotes: true, relax_column_count: true, skip_empty_lines: true, info: true }),
  );
  for await (const item of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    yield { cells: item.record, line: item.info.lines };
  }
}
