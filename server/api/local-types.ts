/**
 * A request and its answer as the local transport (local.ts) takes and gives them: plain data,
 * posted between the phone's page and its worker. Apart from local.ts so that the page's code
 * can name them without loading the service's modules.
 */

export interface LocalRequest {
  method: string;
  /** The path alone, e.g. /v1/nutrition/meals/meal_1 (the query goes in `query`). */
  path: string;
  /** The query, one value per name (the first one, as the HTTP pipeline reads a query string). */
  query?: Record<string, string>;
  /** Header names in lower case: if-match is the one the phone's routes read. */
  headers?: Record<string, string>;
  /** The JSON text of the body, if any. */
  body?: string;
}

export interface LocalAnswer {
  status: number;
  headers: Record<string, string>;
  /** The answer's JSON text. */
  body: string;
}
