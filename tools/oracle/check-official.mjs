#!/usr/bin/env node
// check-official.mjs: compare oracle CSVs of the qualification queries at
// SF 1 with the official TPC-H answers (answers/qN.out: '|'-separated,
// padded fields, numbers rounded to 2 decimals). Validates the oracle's
// loader and CSV conventions. Numbers match within 0.01 absolute or 1e-6
// relative (Q17's official 348406.02 vs DuckDB's 348406.0542857143); strings
// match exactly after trimming the padding; rows in the same order.
import fs from 'node:fs';
import path from 'node:path';

const USAGE = `usage: node check-official.mjs CSV_DIR ANSWERS_DIR

CSV_DIR holds q01.csv..q22.csv (run.mjs --out-dir, qualification SQL, SF 1);
ANSWERS_DIR holds the official q1.out..q22.out. Prints one line per query;
exit 1 if any differs.`;

const args = process.argv.slice(2);
if (args.includes('-h') || args.includes('--help')) { console.log(USAGE); process.exit(0); }
if (args.length !== 2) { process.stderr.write(`check-official.mjs: need CSV_DIR ANSWERS_DIR (see --help)\n`); process.exit(2); }
const [csvDir, ansDir] = args;

function parseCsv(text) {
  const rows = [];
  let row = [], f = '', q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"' && text[i + 1] === '"') { f += '"'; i++; }
      else if (c === '"') q = false;
      else f += c;
    } else if (c === '"') q = true;
    else if (c === ',') { row.push(f); f = ''; }
    else if (c === '\n') { row.push(f); rows.push(row); row = []; f = ''; }
    else f += c;
  }
  if (f !== '' || row.length) { row.push(f); rows.push(row); }
  return rows;
}

const isNum = (s) => /^-?\d+(\.\d+)?$/.test(s);
let bad = 0;
for (let n = 1; n <= 22; n++) {
  const name = `q${String(n).padStart(2, '0')}`;
  const got = parseCsv(fs.readFileSync(path.join(csvDir, `${name}.csv`), 'utf8')).slice(1);
  const exp = fs.readFileSync(path.join(ansDir, `q${n}.out`), 'utf8').split('\n').slice(1)
    .filter((l) => l.trim() !== '').map((l) => l.split('|').map((s) => s.trim()));
  let msg = null;
  if (got.length !== exp.length) msg = `${got.length} rows, official ${exp.length}`;
  for (let r = 0; !msg && r < exp.length; r++) {
    if (got[r].length !== exp[r].length) { msg = `row ${r + 1}: ${got[r].length} columns, official ${exp[r].length}`; break; }
    for (let c = 0; c < exp[r].length; c++) {
      const g = got[r][c], e = exp[r][c];
      const ok = isNum(e) && isNum(g)
        ? Math.abs(+g - +e) <= 0.01 + 1e-9 * Math.abs(+e) || Math.abs(+g - +e) <= 1e-6 * Math.abs(+e)
        : g.trim() === e; // the official files lose leading spaces
      if (!ok) { msg = `row ${r + 1}, column ${c + 1}: got ${g}, official ${e}`; break; }
    }
  }
  if (msg) { bad++; console.log(`${name}: DIFFERS: ${msg}`); } else console.log(`${name}: ok (${exp.length} rows)`);
}
process.exit(bad ? 1 : 0);
