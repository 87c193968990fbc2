// The cold-start floor: a bare node:http + better-sqlite3 server in plain JavaScript (no loader,
// no framework), which opens the database and answers one query. bench/cold-start.ts measures
// spawn → first 200 of it beside `chyme serve`'s, in the same run.
// Usage: node bench/bare-server.mjs <db file>   (prints "LISTENING <url>")
import { createServer } from 'node:http';
import Database from 'better-sqlite3';

const db = new Database(process.argv[2], { fileMustExist: true });
const count = db.prepare('SELECT count(*) AS n FROM meals');
const server = createServer((req, res) => {
  const body = JSON.stringify({ meals: count.get().n });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => console.log(`LISTENING http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
