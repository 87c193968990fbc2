/**
 * Numbered schema migrations. A database records the last one applied in PRAGMA user_version;
 * each pending migration runs with the version bump inside one transaction (Signal-Desktop style),
 * so a crash mid-migration leaves the previous, consistent schema.
 *
 * Append only: never edit a migration that has shipped; add the next number.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
      CREATE TABLE settings (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        timezone TEXT NOT NULL,
        day_start TEXT NOT NULL DEFAULT '00:00',
        units TEXT NOT NULL DEFAULT 'metric',
        user_id TEXT NOT NULL,
        updated_ms INTEGER NOT NULL
      );

      CREATE TABLE meals (
        id TEXT PRIMARY KEY,
        timestamp_ms INTEGER NOT NULL,
        -- Offset from UTC (minutes) where the meal was eaten: with it the meal's day survives DST
        -- changes and travel, and the local clock time of the meal is never lost.
        utc_offset_min INTEGER NOT NULL,
        day TEXT NOT NULL,
        meal_type TEXT NOT NULL CHECK (meal_type IN ('breakfast', 'lunch', 'dinner', 'snack')),
        description TEXT NOT NULL DEFAULT '',
        calories REAL NOT NULL,
        protein_g REAL,
        carbs_g REAL,
        fat_g REAL,
        fiber_g REAL,
        sodium_mg REAL,
        caffeine_mg REAL,
        foods_json TEXT NOT NULL DEFAULT '[]',
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL
      );
      CREATE INDEX meals_by_time ON meals (timestamp_ms DESC, id DESC);
      CREATE INDEX meals_by_day ON meals (day, timestamp_ms DESC, id DESC);

      CREATE TABLE sleep_sessions (
        id TEXT PRIMARY KEY,
        start_ms INTEGER NOT NULL,
        end_ms INTEGER NOT NULL CHECK (end_ms > start_ms),
        day TEXT NOT NULL,
        efficiency REAL,
        awakenings INTEGER,
        source TEXT NOT NULL DEFAULT 'manual',
        created_ms INTEGER NOT NULL
      );
      CREATE INDEX sleep_by_end ON sleep_sessions (end_ms DESC, id DESC);

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        scopes_json TEXT NOT NULL,
        prefix TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        created_ms INTEGER NOT NULL,
        last_used_ms INTEGER,
        revoked_ms INTEGER,
        -- Internal keys (the desktop renderer's own) are hidden from listings.
        internal INTEGER NOT NULL DEFAULT 0
      );

      -- Browser mode: one-time tokens from "chyme serve" and the sessions they open.
      CREATE TABLE ui_tokens (
        token_hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('launch', 'session')),
        created_ms INTEGER NOT NULL,
        expires_ms INTEGER NOT NULL
      );

      CREATE TABLE idempotency_keys (
        principal TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        status INTEGER NOT NULL,
        response_json TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        PRIMARY KEY (principal, idempotency_key)
      );
      CREATE INDEX idempotency_by_age ON idempotency_keys (created_ms);

      -- Every domain event, recorded in the transaction of the change that caused it. Webhook
      -- deliveries and the live event stream are fed from here.
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        data_json TEXT NOT NULL
      );

      -- Small durable facts the service remembers between runs (e.g. the last announced state).
      CREATE TABLE service_state (
        key TEXT PRIMARY KEY,
        value_json TEXT NOT NULL
      );
    `,
  },
];
