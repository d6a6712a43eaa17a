'use strict';
// The contract's database workloads (db, queries, fortunes, updates) as a fastify plugin:
// node-postgres (pg) with a pg.Pool of DATABASE_POOL connections, named (prepared) statements,
// and /fortunes rendered by @fastify/view with EJS (`<%= %>` escapes).
const path = require('node:path');
const { Pool } = require('pg');

const WORLD_ROWS = 10000;
const ADDITIONAL = 'Additional fortune added at request time.';

const randomId = () => 1 + Math.floor(Math.random() * WORLD_ROWS);

// The queries parameter: missing, empty or not a number means 1; clamped to 1..500.
function queryCount(raw) {
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : 1;
  return Math.min(Math.max(n, 1), 500);
}

const worldSchema = {
  type: 'object',
  properties: { id: { type: 'integer' }, randomNumber: { type: 'integer' } },
};
const rowsSchema = { response: { 200: { type: 'array', items: worldSchema } } };

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

function openPool() {
  const max = Number(process.env.DATABASE_POOL || 16);
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max });
  // An idle connection that fails (the database restarted) must not crash the process.
  pool.on('error', (err) => console.error(`node/fastify: database: ${err.message}`));
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

// n rows, one SELECT each, spread over the pool's connections.
function readWorlds(pool, n) {
  const reads = new Array(n);
  for (let i = 0; i < n; i++) reads[i] = readWorld(pool);
  return Promise.all(reads);
}

// New numbers, one per distinct id (so the rows returned match the table), written in one
// UPDATE with the ids sorted (concurrent requests lock rows in the same order).
async function writeWorlds(pool, worlds) {
  const latest = new Map();
  for (const w of worlds) latest.set(w.id, randomId());
  for (const w of worlds) w.randomNumber = latest.get(w.id);
  const ids = [...latest.keys()].sort((a, b) => a - b);
  const values = [];
  for (const id of ids) values.push(id, latest.get(id));
  await pool.query({ name: `update${ids.length}`, text: updateQuery(ids.length), values });
}

// Registers the database routes on app, sharing one pool between the app's instances.
function databaseRoutes(app, pool) {
  app.register(require('@fastify/view'), {
    engine: { ejs: require('ejs') },
    root: path.join(__dirname, 'views'),
    production: true,
  });
  app.get('/db', { schema: { response: { 200: worldSchema } } }, () => readWorld(pool));
  app.get('/queries', { schema: rowsSchema }, (req) => readWorlds(pool, queryCount(req.query.queries)));
  app.get('/updates', { schema: rowsSchema }, async (req) => {
    const worlds = await readWorlds(pool, queryCount(req.query.queries));
    await writeWorlds(pool, worlds);
    return worlds;
  });
  app.get('/fortunes', async (req, reply) => {
    const { rows } = await pool.query({ name: 'fortunes', text: 'SELECT id, message FROM fortune' });
    rows.push({ id: 0, message: ADDITIONAL });
    // UTF-16 order equals code point order for these messages (no characters beyond U+FFFF).
    rows.sort((a, b) => (a.message < b.message ? -1 : a.message > b.message ? 1 : 0));
    return reply.view('fortunes.ejs', { fortunes: rows });
  });
}

module.exports = { openPool, databaseRoutes };
