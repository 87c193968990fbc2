/**
 * The layering rules of docs/architecture.md, checked by test/architecture.test.ts.
 * Paths are relative to the repository root.
 */
const FEATURES = '(nutrition|sleep|digestion|webhooks|auth|foods|backups|imports|export|events|scheduler|mcp)';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle makes the start-up order and the layering undefined.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'api-is-the-top',
      comment: 'server/api/ knows HTTP; only service.ts (which composes everything) may import it.',
      severity: 'error',
      from: { path: '^server/', pathNot: ['^server/api/', '^server/service\\.ts$'] },
      to: { path: '^server/api/' },
    },
    {
      name: 'only-entry-points-import-the-service',
      comment: 'service.ts composes the service; the CLI, the index and the desktop shell start it, nothing below does.',
      severity: 'error',
      from: { path: '^server/', pathNot: ['^server/cli/', '^server/index\\.ts$'] },
      to: { path: '^server/(service\\.ts|cli/)' },
    },
    {
      name: 'engine-is-pure',
      comment: 'engine/ is pure functions of meals, sleep, settings and now: no database, events or features.',
      severity: 'error',
      from: { path: '^server/engine/' },
      to: { path: '^server/', pathNot: ['^server/(engine|time)/'] },
    },
    {
      name: 'db-is-the-bottom',
      comment: 'db/ is raw SQL, one module per table: it knows no feature, no events, no HTTP.',
      severity: 'error',
      from: { path: '^server/db/' },
      to: { path: '^server/', pathNot: ['^server/(db|time)/', '^server/ids\\.ts$'] },
    },
    {
      name: 'features-below-api',
      comment: 'A feature may use db/, engine/, time/ and other features, never the HTTP layer or the composer.',
      severity: 'error',
      from: { path: `^server/${FEATURES}/` },
      to: { path: '^server/(api/|service\\.ts|cli/)' },
    },
    {
      name: 'server-knows-no-shell',
      comment: 'server/ is the whole service and knows nothing of Electron or the renderer.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^(electron|renderer)/' },
    },
    {
      name: 'renderer-is-an-http-client',
      comment:
        'The renderer talks to the service over HTTP. From server/ it may take types, and code only from the ' +
        'dependency-free modules it shares (time arithmetic, the event, scope and digestive-state vocabularies, millilitres to grams, what meals add up to).',
      severity: 'error',
      from: { path: '^renderer/', pathNot: ['^renderer/src/phone/core-worker\\.ts$'] },
      to: {
        path: '^server/',
        pathNot: ['^server/time/tz\\.ts$', '^server/events/types\\.ts$', '^server/auth/scopes\\.ts$', '^server/digestion/vocabulary\\.ts$', '^server/foods/volume\\.ts$', '^server/nutrition/meal-type\\.ts$', '^server/nutrition/totals\\.ts$'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'phone-worker-runs-the-portable-service',
      comment:
        "The phone's worker is a Chyme device in the browser: it runs the service's routes (api/routes/, through api/local.ts), " +
        'features and engine over SQLite-WASM (db/wasm-database.ts), never the Node connection (db/connection.ts: better-sqlite3, node:fs), ' +
        'the HTTP layer (api/http.ts, api/pipeline.ts, Express) or what composes the Node service (service.ts, cli/).',
      severity: 'error',
      from: { path: '^renderer/src/phone/core-worker\\.ts$' },
      to: { path: '^server/(db/connection\\.ts|api/(http|pipeline|static|mcp|openapi)\\.ts|service\\.ts|cli/)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'electron-uses-the-service-not-its-insides',
      comment: 'The desktop shell starts the service and reads its bus; it does not reach into HTTP handlers or SQL.',
      severity: 'error',
      from: { path: '^electron/' },
      to: { path: '^server/(api|db)/' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^build/' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.cts'] },
  },
};
