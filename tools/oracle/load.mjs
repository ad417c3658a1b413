#!/usr/bin/env node
// load.mjs: load a directory of dbgen .tbl files (the 8 TPC-H tables) into a
// DuckDB database file with the TPC-H schema and types (see lib.mjs).
import fs from 'node:fs';
import { openDb, loadTbl, OracleError } from './lib.mjs';

const USAGE = `usage: node load.mjs --tbl DIR --db FILE [--threads N] [-q]

Creates FILE (replacing it) with the tables region, nation, part, supplier,
partsupp, customer, orders and lineitem loaded from DIR/<table>.tbl, and
checks each table's row count against its file's line count.`;

function die(msg, code = 1) {
  process.stderr.write(`load.mjs: ${msg}\n`);
  process.exit(code);
}

const o = { quiet: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const val = () => (i + 1 < argv.length ? argv[++i] : die(`${a} needs a value`, 2));
  if (a === '-h' || a === '--help') { console.log(USAGE); process.exit(0); }
  else if (a === '--tbl') o.tbl = val();
  else if (a === '--db') o.db = val();
  else if (a === '--threads') o.threads = parseInt(val(), 10);
  else if (a === '-q' || a === '--quiet') o.quiet = true;
  else die(`unknown argument ${a} (see --help)`, 2);
}
if (!o.tbl || !o.db) die('need --tbl DIR and --db FILE (see --help)', 2);
if (!fs.existsSync(o.tbl)) die(`${o.tbl}: no such directory`);

try {
  for (const f of [o.db, `${o.db}.wal`]) fs.rmSync(f, { force: true });
  const { instance, conn } = await openDb(o.db, { threads: o.threads });
  await loadTbl(conn, o.tbl, { log: o.quiet ? () => {} : (m) => process.stderr.write(`load: ${m}\n`) });
  await conn.run('CHECKPOINT');
  conn.closeSync();
  instance.closeSync();
} catch (e) {
  die(e instanceof OracleError ? e.message : (e.message || String(e)).split('\n')[0]);
}
