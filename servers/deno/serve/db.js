// The contract's database workloads (db, queries, fortunes, updates) on postgres.js (npm package
// `postgres`, pure JavaScript, run by Deno's Node compatibility): one pool of DATABASE_POOL
// connections, tagged-template queries (prepared statements, postgres.js's default), and the
// fortunes page as a small template with an escaping function: Deno.serve has no template engine.
import postgres from 'postgres';

const WORLD_ROWS = 10000;
const ADDITIONAL = 'Additional fortune added at request time.';

const randomId = () => 1 + Math.floor(Math.random() * WORLD_ROWS);

// The queries parameter: missing, empty or not a number means 1; clamped to 1..500.
export function queryCount(raw) {
  const n = typeof raw === 'string' && /^[0-9]+$/.test(raw) ? Number(raw) : 1;
  return Math.min(Math.max(n, 1), 500);
}

// At most DATABASE_POOL connections, opened on demand; prepared statements on (the default).
export function openPool() {
  return postgres(Deno.env.get('DATABASE_URL'), {
    max: Math.max(1, Number(Deno.env.get('DATABASE_POOL') || 16)),
    prepare: true,
    onnotice: () => {},
  });
}

export async function readWorld(sql) {
  const [row] = await sql`SELECT id, randomnumber FROM world WHERE id = ${randomId()}`;
  return { id: row.id, randomNumber: row.randomnumber };
}

// n rows, one SELECT each, issued at once so they spread over the pool's connections.
export function readWorlds(sql, n) {
  const reads = new Array(n);
  for (let i = 0; i < n; i++) reads[i] = readWorld(sql);
  return Promise.all(reads);
}

// Reads n rows, gives each distinct id a new number (so the rows returned match the table) and
// writes them back one prepared UPDATE per id, each its own implicit transaction (no deadlock
// between concurrent requests that draw the same ids).
export async function updateWorlds(sql, n) {
  const worlds = await readWorlds(sql, n);
  const latest = new Map();
  for (const w of worlds) latest.set(w.id, randomId());
  for (const w of worlds) w.randomNumber = latest.get(w.id);
  const writes = [];
  for (const [id, number] of latest) {
    writes.push(sql`UPDATE world SET randomnumber = ${number} WHERE id = ${id}`);
  }
  await Promise.all(writes);
  return worlds;
}

// Every fortune plus the one added at request time, sorted by message (UTF-16 order, which is
// code point order for these messages: none is beyond U+FFFF).
export async function fortunes(sql) {
  const rows = [...(await sql`SELECT id, message FROM fortune`)];
  rows.push({ id: 0, message: ADDITIONAL });
  rows.sort((a, b) => (a.message < b.message ? -1 : a.message > b.message ? 1 : 0));
  return rows;
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ESCAPES[c]);

// The fortunes page: a template literal whose every interpolation is escaped.
export function renderFortunes(rows) {
  let out = '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>'
    + '<tr><th>id</th><th>message</th></tr>';
  for (const f of rows) out += `<tr><td>${escapeHtml(f.id)}</td><td>${escapeHtml(f.message)}</td></tr>`;
  return out + '</table></body></html>';
}
