// lib.mjs: shared pieces of the DuckDB oracle: the TPC-H schema, loading a
// directory of dbgen .tbl files, and formatting results as CSV in the
// conventions of `dkb run --format csv` (see docs/oracle.md).
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, DuckDBTypeId } from '@duckdb/node-api';

// TPC-H schema (spec 1.4) with DuckDB types: identifiers INTEGER (order keys
// BIGINT: they exceed 2^31 above SF ~89), money and quantities DECIMAL(15,2),
// dates DATE, fixed and variable text VARCHAR.
export const SCHEMA = {
  region: [
    ['r_regionkey', 'INTEGER'], ['r_name', 'VARCHAR'], ['r_comment', 'VARCHAR']],
  nation: [
    ['n_nationkey', 'INTEGER'], ['n_name', 'VARCHAR'], ['n_regionkey', 'INTEGER'],
    ['n_comment', 'VARCHAR']],
  part: [
    ['p_partkey', 'INTEGER'], ['p_name', 'VARCHAR'], ['p_mfgr', 'VARCHAR'],
    ['p_brand', 'VARCHAR'], ['p_type', 'VARCHAR'], ['p_size', 'INTEGER'],
    ['p_container', 'VARCHAR'], ['p_retailprice', 'DECIMAL(15,2)'], ['p_comment', 'VARCHAR']],
  supplier: [
    ['s_suppkey', 'INTEGER'], ['s_name', 'VARCHAR'], ['s_address', 'VARCHAR'],
    ['s_nationkey', 'INTEGER'], ['s_phone', 'VARCHAR'], ['s_acctbal', 'DECIMAL(15,2)'],
    ['s_comment', 'VARCHAR']],
  partsupp: [
    ['ps_partkey', 'INTEGER'], ['ps_suppkey', 'INTEGER'], ['ps_availqty', 'INTEGER'],
    ['ps_supplycost', 'DECIMAL(15,2)'], ['ps_comment', 'VARCHAR']],
  customer: [
    ['c_custkey', 'INTEGER'], ['c_name', 'VARCHAR'], ['c_address', 'VARCHAR'],
    ['c_nationkey', 'INTEGER'], ['c_phone', 'VARCHAR'], ['c_acctbal', 'DECIMAL(15,2)'],
    ['c_mktsegment', 'VARCHAR'], ['c_comment', 'VARCHAR']],
  orders: [
    ['o_orderkey', 'BIGINT'], ['o_custkey', 'INTEGER'], ['o_orderstatus', 'VARCHAR'],
    ['o_totalprice', 'DECIMAL(15,2)'], ['o_orderdate', 'DATE'], ['o_orderpriority', 'VARCHAR'],
    ['o_clerk', 'VARCHAR'], ['o_shippriority', 'INTEGER'], ['o_comment', 'VARCHAR']],
  lineitem: [
    ['l_orderkey', 'BIGINT'], ['l_partkey', 'INTEGER'], ['l_suppkey', 'INTEGER'],
    ['l_linenumber', 'INTEGER'], ['l_quantity', 'DECIMAL(15,2)'],
    ['l_extendedprice', 'DECIMAL(15,2)'], ['l_discount', 'DECIMAL(15,2)'],
    ['l_tax', 'DECIMAL(15,2)'], ['l_returnflag', 'VARCHAR'], ['l_linestatus', 'VARCHAR'],
    ['l_shipdate', 'DATE'], ['l_commitdate', 'DATE'], ['l_receiptdate', 'DATE'],
    ['l_shipinstruct', 'VARCHAR'], ['l_shipmode', 'VARCHAR'], ['l_comment', 'VARCHAR']],
};

export class OracleError extends Error {}

function sqlString(s) {
  return "'" + s.replaceAll("'", "''") + "'";
}

function countLines(file) {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(1 << 20);
  let n = 0, got;
  try {
    while ((got = fs.readSync(fd, buf, 0, buf.length, null)) > 0) {
      for (let i = buf.indexOf(10, 0); i !== -1 && i < got; i = buf.indexOf(10, i + 1)) n++;
    }
  } finally {
    fs.closeSync(fd);
  }
  return n;
}

// Open a database: a file path (created if absent) or ':memory:'.
export async function openDb(dbPath, { threads, readOnly } = {}) {
  const opts = {};
  if (threads) opts.threads = String(threads);
  if (readOnly) opts.access_mode = 'READ_ONLY';
  const instance = await DuckDBInstance.create(dbPath, opts);
  const conn = await instance.connect();
  return { instance, conn };
}

// Create the 8 tables and load DIR/<table>.tbl into each. Checks that every
// file exists and that the loaded row count equals its line count.
export async function loadTbl(conn, dir, { log = () => {} } = {}) {
  for (const table of Object.keys(SCHEMA)) {
    const file = path.join(dir, `${table}.tbl`);
    if (!fs.existsSync(file)) throw new OracleError(`${file}: no such file`);
  }
  for (const [table, cols] of Object.entries(SCHEMA)) {
    const file = path.join(dir, `${table}.tbl`);
    const t0 = Date.now();
    await conn.run(`DROP TABLE IF EXISTS ${table}`);
    await conn.run(`CREATE TABLE ${table} (${cols.map(([n, t]) => `${n} ${t} NOT NULL`).join(', ')})`);
    // No quoting: every byte between two '|' is the field (as dbgen writes
    // it); the trailing '|' of each line is accepted by DuckDB's reader.
    await conn.run(`COPY ${table} FROM ${sqlString(file)} (FORMAT csv, DELIMITER '|', HEADER false, ` +
      `QUOTE '', ESCAPE '', AUTO_DETECT false)`);
    const rows = Number((await conn.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0][0]);
    const lines = countLines(file);
    if (rows !== lines) throw new OracleError(`${file}: loaded ${rows} rows but the file has ${lines} lines`);
    log(`${table}: ${rows} rows (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
}

// Plain decimal text of a double, shortest round-trip digits, never an
// exponent (1e21 -> "1000000000000000000000", 1e-7 -> "0.0000001").
export function doubleText(x) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (Object.is(x, -0)) return '-0';
  let s = String(x);
  const e = s.search(/e/i);
  if (e < 0) return s;
  const neg = s[0] === '-';
  let mant = s.slice(neg ? 1 : 0, e);
  let exp = parseInt(s.slice(e + 1), 10);
  const dot = mant.indexOf('.');
  let digits = dot < 0 ? mant : mant.slice(0, dot) + mant.slice(dot + 1);
  let point = (dot < 0 ? mant.length : dot) + exp; // position of the point in digits
  let out;
  if (point <= 0) out = '0.' + '0'.repeat(-point) + digits;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = digits.slice(0, point) + '.' + digits.slice(point);
  return (neg ? '-' : '') + out;
}

export function csvField(s) {
  return /[",\r\n]/.test(s) ? '"' + s.replaceAll('"', '""') + '"' : s;
}

// Text of one cell by its DuckDB type: DECIMAL exactly at its scale, DOUBLE
// shortest round-trip in plain decimal, DATE YYYY-MM-DD, integers in full,
// NULL as an empty field.
function cellText(v, typeId) {
  if (v === null || v === undefined) return '';
  switch (typeId) {
    case DuckDBTypeId.DOUBLE:
    case DuckDBTypeId.FLOAT:
      return doubleText(v);
    case DuckDBTypeId.BOOLEAN:
      return v ? 'true' : 'false';
    case DuckDBTypeId.DECIMAL:
    case DuckDBTypeId.DATE:
    case DuckDBTypeId.TINYINT: case DuckDBTypeId.SMALLINT: case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.BIGINT: case DuckDBTypeId.HUGEINT: case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT: case DuckDBTypeId.UINTEGER: case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.UHUGEINT: case DuckDBTypeId.VARCHAR:
      return String(v);
    default:
      throw new OracleError(`result type ${typeId} has no CSV convention in the oracle`);
  }
}

// A materialized result as CSV text: header line, then one line per row.
export function resultCsv(result) {
  const names = result.columnNames();
  const types = result.columnTypes().map((t) => t.typeId);
  const lines = [names.map(csvField).join(',')];
  for (const row of result.getRows()) {
    lines.push(row.map((v, i) => csvField(cellText(v, types[i]))).join(','));
  }
  return lines.join('\n') + '\n';
}

// Column names and DuckDB type strings of a result ("DECIMAL(38,4)").
export function resultTypes(result) {
  const names = result.columnNames();
  return result.columnTypes().map((t, i) => [names[i], t.toString()]);
}
