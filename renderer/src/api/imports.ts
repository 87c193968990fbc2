/** /v1/imports: other apps' exports (Apple Health, Cronometer, MyFitnessPal, Oura, Fitbit) in, and undone. */
import { api, postForm, type UploadOptions } from './client';
import type { Import, List } from './types';

export interface ImportRequest {
  files: readonly File[];
  /** Read the files as this app's export; detected from their content when absent. */
  source?: string | undefined;
  /** IANA zone for times written without an offset; the time zone setting when absent. */
  timezone?: string | undefined;
  /** Report what would be added and write nothing. */
  dryRun: boolean;
}

export async function createImport(req: ImportRequest, opts: UploadOptions = {}): Promise<Import> {
  const form = new FormData();
  // Fields before files: the service reads the multipart body as a stream, in order.
  if (req.source) form.append('source', req.source);
  if (req.timezone) form.append('timezone', req.timezone);
  form.append('dry_run', String(req.dryRun));
  for (const f of req.files) form.append('file', f, f.name);
  return (await postForm<Import>('/v1/imports', form, opts)).body;
}

export const listImports = (query: { limit?: number; starting_after?: string } = {}, signal?: AbortSignal) => api.get<List<Import>>('/v1/imports', query, signal);
/** Removes what the import added, except records edited since (listed in `undo.kept`). */
export const undoImport = (id: string) => api.del<Import>(`/v1/imports/${encodeURIComponent(id)}`);
