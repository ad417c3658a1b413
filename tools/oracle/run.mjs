#!/usr/bin/env node
// run.mjs: run SQL in DuckDB and print the result as CSV in the conventions
// of `dkb run --format csv` (header line; DECIMAL exact at DuckDB's scale;
// DOUBLE shortest round-trip in plain decimal; DATE YYYY-MM-DD; strings
// quoted only when they hold , " or a newline; NULL as an empty field).
// Also times queries for bench/cpu_vs_duckdb.sh (--bench).
import fs from 'node:fs';
import path from 'node:path';
import { openDb, loadTbl, resultCsv, resultTypes, OracleError } from './lib.mjs';

const USAGE = `usage: node run.mjs (--db FILE | --tbl DIR) [options] [SQLFILE...]

Runs each SQL file (or stdin when none is given or the name is '-') in DuckDB.
  --db FILE          database written by load.mjs (opened read-only)
  --tbl DIR          load DIR/*.tbl into an in-memory database first
  --threads N        DuckDB threads (default: DuckDB's default)
  --out-dir DIR      write DIR/<sqlfile name>.csv for each file (needed for
                     more than one file); else print CSV to stdout
  --types            print a '# name TYPE, ...' line to stderr for each query
  --check-limit-ties warn (stderr, exit 3 at the end) when a query ending in
                     ORDER BY ... LIMIT N has a tie on its ORDER BY columns
                     between rows N and N+1 (the golden's row set would then
                     depend on the engine)
  --bench W,R        instead of CSV, run each query W times unmeasured then R
                     times measured; print 'name<TAB>median_ms<TAB>all ms' lines
                     (with --out-dir, also the CSV of the last run)
  -h, --help         this text`;

function die(msg, code = 1) {
  process.stderr.write(`run.mjs: ${msg}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const o = { files: [], threads: 0, types: false, ties: false, bench: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) die(`${a} needs a value`, 2);
      return argv[++i];
    };
    if (a === '-h' || a === '--help') { process.stdout.write(USAGE + '\n'); process.exit(0); }
    else if (a === '--db') o.db = val();
    else if (a === '--tbl') o.tbl = val();
    else if (a === '--threads') o.threads = parseInt(val(), 10);
    else if (a === '--out-dir') o.outDir = val();
    else if (a === '--types') o.types = true;
    else if (a === '--check-limit-ties') o.ties = true;
    else if (a === '--bench') {
      const m = /^(\d+),(\d+)$/.exec(val());
      if (!m || +m[2] < 1) die('--bench wants WARMUP,RUNS (e.g. 1,5)', 2);
      o.bench = { warmup: +m[1], runs: +m[2] };
    } else if (a.startsWith('-') && a !== '-') die(`unknown option ${a} (see --help)`, 2);
    else o.files.push(a);
  }
  if (!o.db === !o.tbl) die('give exactly one of --db FILE or --tbl DIR', 2);
  if (Number.isNaN(o.threads) || o.threads < 0) die('--threads wants a positive integer', 2);
  if (o.files.length === 0) o.files.push('-');
  if (o.files.length > 1 && !o.outDir && !o.bench) die('several SQL files need --out-dir', 2);
  return o;
}

function readSql(file) {
  const text = file === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(file, 'utf8');
  if (!text.trim()) throw new OracleError(`${file}: empty SQL`);
  return text;
}

function queryName(file) {
  return file === '-' ? 'stdin' : path.basename(file).replace(/\.sql$/, '');
}

// The ORDER BY column names and LIMIT of a query whose text ends with them
// (the TPC-H queries with a row limit order by plain output columns).
function orderLimit(sql) {
  const body = sql.replace(/--[^\n]*/g, ' ').replace(/;\s*$/, '').trim();
  const m = /\border\s+by\s+([\s\S]*?)\s+limit\s+(\d+)\s*;?\s*$/i.exec(body);
  if (!m || /\border\s+by\b/i.test(m[1])) return null;
  const keys = m[1].split(',').map((s) => s.trim().replace(/\s+(asc|desc)$/i, '').trim());
  return { keys, limit: parseInt(m[2], 10), start: m.index };
}

async function checkLimitTies(conn, name, sql) {
  const ol = orderLimit(sql);
  if (!ol) return null;
  const body = sql.replace(/;\s*$/, '').trim();
  const more = body.replace(/(\blimit\s+)(\d+)(\s*)$/i, (_, a, n, b) => `${a}${+n + 1}${b}`);
  const r = await conn.runAndReadAll(more);
  const names = r.columnNames();
  const idx = ol.keys.map((k) => names.indexOf(k));
  if (idx.some((i) => i < 0)) return `${name}: ORDER BY ${ol.keys.join(', ')} is not all output columns; tie check skipped`;
  const rows = r.getRows();
  if (rows.length <= ol.limit) return null;
  const a = rows[ol.limit - 1], b = rows[ol.limit];
  if (idx.every((i) => String(a[i]) === String(b[i]))) {
    return `${name}: rows ${ol.limit} and ${ol.limit + 1} tie on ORDER BY ${ol.keys.join(', ')} ` +
      `(${idx.map((i) => String(a[i])).join(', ')}): LIMIT ${ol.limit} keeps an engine-dependent row`;
  }
  return null;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.db && !fs.existsSync(o.db)) die(`${o.db}: no such database (make it with load.mjs)`);
  const { conn } = await openDb(o.db ?? ':memory:', {
    threads: o.threads || undefined,
    ...(o.db ? { readOnly: true } : {}),
  });
  if (o.tbl) await loadTbl(conn, o.tbl);
  if (o.outDir) fs.mkdirSync(o.outDir, { recursive: true });
  let tieWarnings = 0;
  for (const file of o.files) {
    const name = queryName(file);
    const sql = readSql(file);
    if (o.bench) {
      for (let i = 0; i < o.bench.warmup; i++) await conn.runAndReadAll(sql);
      const ms = [];
      let last;
      for (let i = 0; i < o.bench.runs; i++) {
        const t0 = process.hrtime.bigint();
        last = await conn.runAndReadAll(sql);
        ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      if (o.outDir) fs.writeFileSync(path.join(o.outDir, `${name}.csv`), resultCsv(last));
      const s = [...ms].sort((x, y) => x - y);
      const med = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
      process.stdout.write(`${name}\t${med.toFixed(3)}\t${ms.map((x) => x.toFixed(3)).join(',')}\n`);
      continue;
    }
    let result;
    try {
      result = await conn.runAndReadAll(sql);
    } catch (e) {
      throw new OracleError(`${name}: ${e.message.split('\n')[0]}`);
    }
    if (o.types) {
      process.stderr.write(`# ${name}: ${resultTypes(result).map(([n, t]) => `${n} ${t}`).join(', ')}\n`);
    }
    const csv = resultCsv(result);
    if (o.outDir) fs.writeFileSync(path.join(o.outDir, `${name}.csv`), csv);
    else process.stdout.write(csv);
    if (o.ties) {
      const w = await checkLimitTies(conn, name, sql);
      if (w) { process.stderr.write(`run.mjs: warning: ${w}\n`); tieWarnings++; }
    }
  }
  if (tieWarnings) process.exitCode = 3;
}

main().catch((e) => die(e instanceof OracleError ? e.message : (e.stack || String(e))));
