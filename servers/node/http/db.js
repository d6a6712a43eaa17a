'use strict';
// The contract's database workloads (db, queries, fortunes, updates) on node-postgres (pg): one
// pg.Pool, named (prepared) statements, and the fortunes page as a small template literal with
// an escaping function. node/http has no template engine of its own.
const { Pool } = require('pg');

const WORLD_ROWS = 10000;
const ADDITIONAL = 'Additional fortune added at request time.';

const randomId = () => 1 + Math.floor(Math.random() * WORLD_ROWS);

// The queries parameter: missing, empty or not a number means 1; clamped to 1..500.
function queryCount(raw) {
  const n = typeof raw === 'string' && /^[0-9]+$/.test(raw) ? Number(raw) : 1;
  return Math.min(Math.max(n, 1), 500);
}

// A pool of `size` connections (DATABASE_POOL unless the caller divides it), opened on demand.
function openPool(size = Number(process.env.DATABASE_POOL || 16)) {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Math.max(1, size) });
  // An idle connection that fails (the database restarted) must not crash the process.
  pool.on('error', (err) => console.error(`node/http: database: ${err.message}`));
  return pool;
}

async function readWorld(pool) {
  const { rows } = await pool.query({
    name: 'world',
    text: 'SELECT id, randomnumber FROM world WHERE id = $1',
    values: [randomId()],
  });
  return { id: rows[0].id, randomNumber: rows[0].randomnumber };
}

// n rows, one SELECT each, issued at once so they spread over the pool's connections.
function readWorlds(pool, n) {
  const reads = new Array(n);
  for (let i = 0; i < n; i++) reads[i] = readWorld(pool);
  return Promise.all(reads);
}

// The batched UPDATE for `count` distinct ids, one named statement per count.
const updateTexts = new Map();
function updateQuery(count) {
  let text = updateTexts.get(count);
  if (!text) {
    const values = [];
    for (let i = 0; i < count; i++) values.push(`($${2 * i + 1}::integer, $${2 * i + 2}::integer)`);
    text = `UPDATE world SET randomnumber = v.r FROM (VALUES ${values.join(', ')}) AS v(id, r) WHERE world.id = v.id`;
    updateTexts.set(count, text);
  }
  return text;
}

// Reads n rows, gives each distinct id a new number (so the rows returned match the table) and
// writes them in one UPDATE, ids sorted (concurrent requests lock rows in the same order).
async function updateWorlds(pool, n) {
  const worlds = await readWorlds(pool, n);
  const latest = new Map();
  for (const w of worlds) latest.set(w.id, randomId());
  for (const w of worlds) w.randomNumber = latest.get(w.id);
  const ids = [...latest.keys()].sort((a, b) => a - b);
  const values = [];
  for (const id of ids) values.push(id, latest.get(id));
  await pool.query({ name: `update${ids.length}`, text: updateQuery(ids.length), values });
  return worlds;
}

// Every fortune plus the one added at request time, sorted by message (UTF-16 order, which is
// code point order for these messages: none is beyond U+FFFF).
async function fortunes(pool) {
  const { rows } = await pool.query({ name: 'fortunes', text: 'SELECT id, message FROM fortune' });
  rows.push({ id: 0, message: ADDITIONAL });
  rows.sort((a, b) => (a.message < b.message ? -1 : a.message > b.message ? 1 : 0));
  return rows;
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ESCAPES[c]);

// The fortunes page: a template literal whose every interpolation is escaped.
function renderFortunes(rows) {
  let out = '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>';
  for (const f of rows) out += `<tr><td>${escapeHtml(f.id)}</td><td>${escapeHtml(f.message)}</td></tr>`;
  return out + '</table></body></html>';
}

module.exports = { openPool, queryCount, readWorld, readWorlds, updateWorlds, fortunes, renderFortunes };
