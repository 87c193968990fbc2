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

/**
 * Triggers that record, in the writer's own transaction, every local change of a synced table in
 * sync_outbox (server/sync/engine.ts moves them into the sync documents). Written out here, not
 * read from the sync feature's column lists, because a shipped migration must never change; a
 * later migration that adds a synced column recreates that table's triggers. `day` is not synced:
 * each device derives it from the timestamp and its settings.
 */
function syncTriggers(table: string, entity: string, idExpr: { new: string; old: string }, columns: readonly string[], when = ''): string {
  const active = `(SELECT active FROM sync_capture WHERE id = 1) = 1`;
  const changed = columns.map((c) => `CASE WHEN OLD.${c} IS NOT NEW.${c} THEN ',${c}' ELSE '' END`).join(' || ');
  const whenNew = when ? ` AND ${when.replaceAll('ROW.', 'NEW.')}` : '';
  const whenOld = when ? ` AND ${when.replaceAll('ROW.', 'OLD.')}` : '';
  return `
      CREATE TRIGGER ${table}_sync_insert AFTER INSERT ON ${table} WHEN ${active}${whenNew} BEGIN
        INSERT INTO sync_outbox (entity, record_id, fields) VALUES ('${entity}', ${idExpr.new}, '*');
      END;
      CREATE TRIGGER ${table}_sync_update AFTER UPDATE ON ${table} WHEN ${active}${whenNew} BEGIN
        INSERT INTO sync_outbox (entity, record_id, fields)
          SELECT '${entity}', ${idExpr.new}, substr(f, 2) FROM (SELECT ${changed} AS f) WHERE f <> '';
      END;
      CREATE TRIGGER ${table}_sync_delete AFTER DELETE ON ${table} WHEN ${active}${whenOld} BEGIN
        INSERT INTO sync_outbox (entity, record_id, fields) VALUES ('${entity}', ${idExpr.old}, '-');
      END;`;
}

const byId = { new: 'NEW.id', old: 'OLD.id' };

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
  {
    version: 2,
    name: 'webhook subscriptions and the delivery outbox',
    sql: `
      CREATE TABLE webhook_subscriptions (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        events_json TEXT NOT NULL,
        secret TEXT NOT NULL,
        -- After a rotation the old secret keeps signing (a second v1=) until this instant.
        previous_secret TEXT,
        previous_secret_expires_ms INTEGER,
        status TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
        -- Set when the service disabled it (deliveries failing for 3 days); NULL when paused by hand.
        disabled_reason TEXT,
        disabled_ms INTEGER,
        -- Start of the current run of failed deliveries; NULL once anything succeeds.
        failing_since_ms INTEGER,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL
      );

      -- The outbox: one row per (event, subscription), written in the transaction of the change
      -- that caused the event, before any attempt is made.
      CREATE TABLE webhook_deliveries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
        event_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('event', 'test', 'redelivery')),
        redelivery_of TEXT,
        -- The exact JSON body sent on every attempt (the envelope carries this delivery's id).
        body TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
        max_attempts INTEGER NOT NULL,
        attempt_count INTEGER NOT NULL DEFAULT 0,
        -- When the next attempt is due; NULL while an attempt is in flight or once finished.
        next_attempt_ms INTEGER,
        created_ms INTEGER NOT NULL,
        completed_ms INTEGER,
        status_detail TEXT
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_ms) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_by_subscription ON webhook_deliveries (subscription_id, seq DESC);
      CREATE INDEX webhook_deliveries_by_completion ON webhook_deliveries (completed_ms) WHERE completed_ms IS NOT NULL;

      -- Every attempt, recorded when it starts (finished_ms NULL until it ends), so an attempt cut
      -- short by a crash is known and retried after restart.
      CREATE TABLE webhook_attempts (
        delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        attempt INTEGER NOT NULL,
        started_ms INTEGER NOT NULL,
        finished_ms INTEGER,
        outcome TEXT CHECK (outcome IN ('succeeded', 'failed', 'interrupted')),
        status_code INTEGER,
        duration_ms INTEGER,
        error TEXT,
        PRIMARY KEY (delivery_id, attempt)
      );
    `,
  },
  {
    version: 3,
    name: 'where meal calories came from',
    sql: `
      -- 'logged' (typed in), 'foods' (the sum of the foods) or 'macros' (4/4/9 kcal per gram).
      -- Derived calories follow their source on edit; logged ones are never overwritten. Meals
      -- stored before this migration count as logged, the choice that never changes a number.
      ALTER TABLE meals ADD COLUMN calories_source TEXT NOT NULL DEFAULT 'logged'
        CHECK (calories_source IN ('logged', 'foods', 'macros'));
    `,
  },
  {
    version: 4,
    name: 'foods, their search index, usage and saved meals',
    sql: `
      -- The shipped USDA table (source 'usda_sr', loaded at start-up when the shipped file's
      -- version differs from the one recorded in service_state) and the person's own foods.
      -- seq is an explicit INTEGER PRIMARY KEY so the FTS index's rowids survive VACUUM.
      CREATE TABLE foods (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        source TEXT NOT NULL CHECK (source IN ('usda_sr', 'custom')),
        name TEXT NOT NULL,
        brand TEXT,
        -- Per 100 g; NULL when unknown (never a silent 0).
        calories REAL,
        protein_g REAL,
        carbs_g REAL,
        fat_g REAL,
        fiber_g REAL,
        sugars_g REAL,
        sodium_mg REAL,
        caffeine_mg REAL,
        -- [{"label": "1 cup, sliced", "grams": 150}, ...]; a portion's id is its 1-based position.
        portions_json TEXT NOT NULL DEFAULT '[]',
        -- USDA foods: bit i set when nutrient i's value comes from SR28 (else SR24); NULL for custom.
        sr28_mask INTEGER,
        created_ms INTEGER,
        updated_ms INTEGER
      );
      CREATE INDEX foods_by_source ON foods (source);

      -- Words of names and brands; no stemming (plurals and typos are handled by the query
      -- builder against this index's vocabulary), diacritics folded so "creme" finds "crème".
      CREATE VIRTUAL TABLE foods_fts USING fts5(
        name, brand, content = 'foods', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
      );
      CREATE VIRTUAL TABLE foods_vocab USING fts5vocab(foods_fts, 'row');
      CREATE TRIGGER foods_fts_insert AFTER INSERT ON foods BEGIN
        INSERT INTO foods_fts (rowid, name, brand) VALUES (new.seq, new.name, new.brand);
      END;
      CREATE TRIGGER foods_fts_delete AFTER DELETE ON foods BEGIN
        INSERT INTO foods_fts (foods_fts, rowid, name, brand) VALUES ('delete', old.seq, old.name, old.brand);
      END;
      CREATE TRIGGER foods_fts_update AFTER UPDATE OF name, brand ON foods BEGIN
        INSERT INTO foods_fts (foods_fts, rowid, name, brand) VALUES ('delete', old.seq, old.name, old.brand);
        INSERT INTO foods_fts (rowid, name, brand) VALUES (new.seq, new.name, new.brand);
      END;

      -- How often and how lately the person logged each food (meals referencing it by food_id),
      -- kept in step with meals in the same transaction: it ranks their foods first.
      CREATE TABLE food_usage (
        food_id TEXT PRIMARY KEY,
        use_count INTEGER NOT NULL,
        last_used_ms INTEGER NOT NULL
      );

      CREATE TABLE saved_meals (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        meal_type TEXT CHECK (meal_type IN ('breakfast', 'lunch', 'dinner', 'snack')),
        foods_json TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL
      );

      -- Where each nutrient of a meal came from, as calories_source does for calories:
      -- {"protein_g": "foods" | "logged", ...}. A nutrient missing from the map is "logged" when it
      -- has a value (meals stored before this migration: never changes a number) and unknown otherwise.
      ALTER TABLE meals ADD COLUMN nutrient_sources_json TEXT NOT NULL DEFAULT '{}';
    `,
  },
  {
    version: 5,
    name: 'imports from other apps: record sources, inferred meal times, naps, and what each import added',
    sql: `
      -- Where a record came from. Meals: manual or one of the importers. Sleep already had a free-text
      -- source (API clients set it), so only meals get the closed list.
      ALTER TABLE meals ADD COLUMN source TEXT NOT NULL DEFAULT 'manual'
        CHECK (source IN ('manual', 'apple_health', 'cronometer', 'myfitnesspal', 'oura', 'fitbit'));
      -- 1 when the source had no time of day and a default meal time was used (the model weighs it down).
      ALTER TABLE meals ADD COLUMN inferred_time INTEGER NOT NULL DEFAULT 0 CHECK (inferred_time IN (0, 1));
      -- 1 for a nap: kept, but it makes no overnight score.
      ALTER TABLE sleep_sessions ADD COLUMN nap INTEGER NOT NULL DEFAULT 0 CHECK (nap IN (0, 1));

      CREATE TABLE imports (
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('completed', 'undone')),
        timezone TEXT NOT NULL,
        files_json TEXT NOT NULL,
        meals_added INTEGER NOT NULL,
        sleep_added INTEGER NOT NULL,
        duplicates_skipped INTEGER NOT NULL,
        warnings_json TEXT NOT NULL,
        first_day TEXT,
        last_day TEXT,
        created_ms INTEGER NOT NULL,
        undone_ms INTEGER,
        undo_json TEXT
      );
      CREATE INDEX imports_by_time ON imports (created_ms DESC, id DESC);

      -- One row per record an import added, keyed by the source record's stable key: a second import
      -- of the same record finds its key and adds nothing. fingerprint is a hash of the record's
      -- content as added, so undo can tell what somebody edited since (even within a millisecond).
      CREATE TABLE import_records (
        source_key TEXT PRIMARY KEY,
        import_id TEXT NOT NULL REFERENCES imports (id),
        kind TEXT NOT NULL CHECK (kind IN ('meal', 'sleep')),
        record_id TEXT NOT NULL,
        fingerprint TEXT NOT NULL
      );
      CREATE INDEX import_records_by_import ON import_records (import_id);
    `,
  },
  {
    version: 7,
    name: 'due webhook deliveries by subscription',
    sql: `
      -- The dispatcher asks each subscription with free in-flight slots for its due deliveries,
      -- so a receiver that hangs (its slots full, its backlog growing) is never walked past by
      -- the queries that serve the others.
      CREATE INDEX webhook_deliveries_due_by_subscription ON webhook_deliveries (subscription_id, next_attempt_ms, seq)
        WHERE status = 'pending' AND next_attempt_ms IS NOT NULL;
    `,
  },
  {
    version: 8,
    name: 'webhook receivers pinned by certificate fingerprint',
    sql: `
      -- A subscription may trust exactly one TLS certificate (a self-signed one, as Home Assistant
      -- often has) by its SHA-256 fingerprint, "AB:CD:…" as Node and openssl print it. NULL: the
      -- usual verification against the system's certificate authorities.
      ALTER TABLE webhook_subscriptions ADD COLUMN tls_pin_sha256 TEXT;
      -- The certificate the receiver presented at the last HTTPS attempt, so the person can pin it.
      ALTER TABLE webhook_subscriptions ADD COLUMN tls_seen_sha256 TEXT;
      ALTER TABLE webhook_subscriptions ADD COLUMN tls_seen_ms INTEGER;
      ALTER TABLE webhook_attempts ADD COLUMN peer_certificate_sha256 TEXT;
    `,
  },
  {
    version: 9,
    name: 'sync between one person\'s devices: set-up, the change outbox and where each record lives',
    sql: `
      -- This device's sync set-up: one row while sync is on, none before set-up and after leaving.
      -- The relay token stays here (never in a synced document).
      CREATE TABLE sync_config (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        device_id TEXT NOT NULL,
        device_name TEXT NOT NULL,
        relay_url TEXT NOT NULL,
        relay_token TEXT NOT NULL,
        root_url TEXT NOT NULL,
        enabled_ms INTEGER NOT NULL
      );

      -- 1 while local changes of synced records are recorded in sync_outbox: sync is on, and the
      -- projector (which writes what came from the documents) is not writing. Read by the triggers.
      CREATE TABLE sync_capture (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        active INTEGER NOT NULL CHECK (active IN (0, 1))
      );
      INSERT INTO sync_capture (id, active) VALUES (1, 0);

      -- Local changes not yet in the sync documents, in commit order: fields is '*' (a new record),
      -- '-' (deleted) or the comma-separated columns an update changed. Written by every writer's
      -- transaction (the triggers), so a change committed here is never lost to a crash.
      CREATE TABLE sync_outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        entity TEXT NOT NULL,
        record_id TEXT NOT NULL,
        fields TEXT NOT NULL
      );
      CREATE INDEX sync_outbox_by_record ON sync_outbox (record_id);

      -- The document that holds each synced record (a record stays in the document it was created in).
      CREATE TABLE sync_records (
        record_id TEXT PRIMARY KEY,
        doc_url TEXT NOT NULL
      );

      -- Every shard document this device knows: the root's change counter when it was last
      -- projected here, and whether it holds local changes the relay has not confirmed.
      CREATE TABLE sync_shards (
        doc_url TEXT PRIMARY KEY,
        shard_key TEXT NOT NULL,
        device_id TEXT NOT NULL,
        projected_rev INTEGER NOT NULL DEFAULT -1,
        unconfirmed INTEGER NOT NULL DEFAULT 0
      );

      -- Concurrent edits of one field found while projecting (the card shows the newest).
      CREATE TABLE sync_conflicts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        entity TEXT NOT NULL,
        record_id TEXT NOT NULL,
        field TEXT NOT NULL,
        kept_json TEXT NOT NULL,
        others_json TEXT NOT NULL,
        detected_ms INTEGER NOT NULL
      );
      ${syncTriggers('meals', 'meal', byId, [
        'timestamp_ms', 'utc_offset_min', 'meal_type', 'description', 'calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g',
        'sodium_mg', 'caffeine_mg', 'foods_json', 'created_ms', 'updated_ms', 'calories_source', 'nutrient_sources_json', 'source', 'inferred_time',
      ])}
      ${syncTriggers('sleep_sessions', 'sleep', byId, ['start_ms', 'end_ms', 'efficiency', 'awakenings', 'source', 'created_ms', 'nap'])}
      ${syncTriggers(
        'foods',
        'food',
        byId,
        ['name', 'brand', 'calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sugars_g', 'sodium_mg', 'caffeine_mg', 'portions_json', 'created_ms', 'updated_ms'],
        "ROW.source = 'custom'",
      )}
      ${syncTriggers('saved_meals', 'saved_meal', byId, ['name', 'meal_type', 'foods_json', 'created_ms', 'updated_ms'])}
      ${syncTriggers('settings', 'settings', { new: "'settings'", old: "'settings'" }, ['timezone', 'day_start', 'units', 'user_id', 'updated_ms'])}
    `,
  },
  {
    version: 10,
    name: 'end-to-end encrypted sync: the history secret, this device\'s copies of the documents, integrity problems',
    sql: `
      -- Sync through a relay that stores only sealed chunks replaces the plaintext protocol outright
      -- (sync was never released): a set-up of the old protocol is not carried over.
      UPDATE sync_capture SET active = 0;
      DELETE FROM sync_config;
      DELETE FROM sync_outbox;
      DELETE FROM sync_records;
      DELETE FROM sync_conflicts;
      DROP TABLE sync_shards;
      -- The relay token is needed only to create the space (set-up), never kept; the history
      -- secret (base32) is what every later connection derives its keys from.
      ALTER TABLE sync_config DROP COLUMN relay_token;
      ALTER TABLE sync_config DROP COLUMN root_url;
      ALTER TABLE sync_config ADD COLUMN history_secret TEXT NOT NULL DEFAULT '';
      ALTER TABLE sync_records RENAME COLUMN doc_url TO doc_oid;

      -- This device's copy of each document of the history, by its opaque id on the relay: the
      -- whole Automerge document (save()), its heads, the heads the relay is known to hold, whether
      -- local changes are not on the relay yet (dirty), whether changes that arrived are not yet in
      -- SQLite (unprojected), and the sealed bytes stored on the relay since its last snapshot.
      -- Kept when the device leaves: a device that joins the same history again merges the edits
      -- it made meanwhile.
      CREATE TABLE sync_docs (
        oid TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        bytes BLOB NOT NULL,
        heads TEXT NOT NULL,
        -- bytes is a save() of base_bytes, then the changes since, appended (saved again whole
        -- once they outgrow it): storing a change costs the change, not the document.
        base_bytes INTEGER NOT NULL DEFAULT 0,
        synced_heads TEXT NOT NULL DEFAULT '[]',
        dirty INTEGER NOT NULL DEFAULT 0,
        unprojected INTEGER NOT NULL DEFAULT 0,
        tail_bytes INTEGER NOT NULL DEFAULT 0,
        snapshot_bytes INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX sync_docs_dirty ON sync_docs (dirty) WHERE dirty = 1;

      -- Chunks from the relay that failed authentication (changed bytes, or moved to another
      -- document): skipped, and shown in the sync status.
      CREATE TABLE sync_integrity (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        oid TEXT NOT NULL,
        relay_seq INTEGER NOT NULL,
        problem TEXT NOT NULL,
        detected_ms INTEGER NOT NULL,
        UNIQUE (oid, relay_seq)
      );
    `,
  },
  {
    version: 11,
    name: 'meals logged through MCP and MQTT say so; a meal type guessed from the time follows the time',
    sql: `
      -- SQLite cannot change a CHECK, so meals is rebuilt: the same columns (in the same order) and
      -- rows, two more sources, and meal_type_inferred (1: the meal type was guessed from the time
      -- of day, so moving the meal guesses again). Its indexes and sync triggers are made again,
      -- meal_type_inferred among the synced columns: every device re-guesses a moved meal alike.
      CREATE TABLE meals_rebuilt (
        id TEXT PRIMARY KEY,
        timestamp_ms INTEGER NOT NULL,
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
        updated_ms INTEGER NOT NULL,
        calories_source TEXT NOT NULL DEFAULT 'logged' CHECK (calories_source IN ('logged', 'foods', 'macros')),
        nutrient_sources_json TEXT NOT NULL DEFAULT '{}',
        source TEXT NOT NULL DEFAULT 'manual'
          CHECK (source IN ('manual', 'apple_health', 'cronometer', 'myfitnesspal', 'oura', 'fitbit', 'mcp', 'mqtt')),
        inferred_time INTEGER NOT NULL DEFAULT 0 CHECK (inferred_time IN (0, 1)),
        meal_type_inferred INTEGER NOT NULL DEFAULT 0 CHECK (meal_type_inferred IN (0, 1))
      );
      INSERT INTO meals_rebuilt (id, timestamp_ms, utc_offset_min, day, meal_type, description, calories, protein_g, carbs_g, fat_g,
          fiber_g, sodium_mg, caffeine_mg, foods_json, created_ms, updated_ms, calories_source, nutrient_sources_json, source, inferred_time)
        SELECT id, timestamp_ms, utc_offset_min, day, meal_type, description, calories, protein_g, carbs_g, fat_g,
          fiber_g, sodium_mg, caffeine_mg, foods_json, created_ms, updated_ms, calories_source, nutrient_sources_json, source, inferred_time
        FROM meals;
      DROP TABLE meals;
      ALTER TABLE meals_rebuilt RENAME TO meals;
      CREATE INDEX meals_by_time ON meals (timestamp_ms DESC, id DESC);
      CREATE INDEX meals_by_day ON meals (day, timestamp_ms DESC, id DESC);
      ${syncTriggers('meals', 'meal', byId, [
        'timestamp_ms', 'utc_offset_min', 'meal_type', 'description', 'calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g',
        'sodium_mg', 'caffeine_mg', 'foods_json', 'created_ms', 'updated_ms', 'calories_source', 'nutrient_sources_json', 'source', 'inferred_time',
        'meal_type_inferred',
      ])}
    `,
  },
  {
    version: 12,
    name: 'an import written in several transactions: what it has written so far, removed if it does not finish',
    sql: `
      -- An import commits its records in short transactions (the service's own writes go between
      -- them). Each transaction lists here what it added; the import's last one deletes the import's
      -- rows. Rows left here belong to an import that failed or was cut off by a crash: what they
      -- name is removed (on failure, and at start-up), so an import is all or nothing.
      -- record_id is the added record's id; for 'settings', the settings as they were before (JSON).
      CREATE TABLE import_writes (
        import_id TEXT NOT NULL,
        entity TEXT NOT NULL CHECK (entity IN ('import', 'meal', 'sleep', 'food', 'saved_meal', 'webhook_subscription', 'settings')),
        record_id TEXT NOT NULL
      );
      CREATE INDEX import_writes_by_import ON import_writes (import_id);
    `,
  },
];
