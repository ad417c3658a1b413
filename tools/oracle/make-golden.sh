#!/usr/bin/env bash
# make-golden.sh: regenerate the DuckDB golden answers of the 22 TPC-H queries,
# tests/answers/sf<SF>/qNN-s<S>.csv, and their manifest tests/answers/MANIFEST.
# For each scale factor: dbgen-identical .tbl data from `dkb gen`, loaded once
# into DuckDB; for each seed and query the SQL from `dkb sql`, run by DuckDB.
# Seed 0 is cross-checked against the qualification queries in
# $TPCH_SHARED/queries when that folder exists. See docs/oracle.md.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: tools/oracle/make-golden.sh [options]

Regenerates tests/answers/sf<SF>/qNN-s<S>.csv (DuckDB's answers) and
tests/answers/MANIFEST (the SQL and CSV sha256 of each, rows, DuckDB version).

options:
  --dkb BIN        the dkb binary (default: $DKB, else build-oracle/dkb, else build/dkb)
  --sf LIST        scale factors (default "0.01 0.1")
  --seeds LIST     seeds (default "0 1 2 3 4 5")
  --out DIR        answers folder (default tests/answers); MANIFEST is rewritten
                   only for the default SF and seed lists
  --work DIR       scratch folder (default a new one under ${TMPDIR:-/tmp}, removed at the end)
  --threads N      DuckDB and dkb gen threads (default: all cores)
  -h, --help       this text

Needs Node.js 20 and tools/oracle/node_modules (installed here with `npm ci`
when absent: network access to the npm registry).
EOF
}

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ORACLE="$ROOT/tools/oracle"
DKB_BIN=${DKB:-}
SFS="0.01 0.1"
SEEDS="0 1 2 3 4 5"
OUT="$ROOT/tests/answers"
WORK=""
THREADS=""
DEFAULT_SET=1
TPCH_SHARED=${TPCH_SHARED:-/work/shared/tpch}

die() { echo "make-golden.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
    case $1 in
        -h|--help) usage; exit 0 ;;
        --dkb) DKB_BIN=${2:?--dkb needs a value}; shift 2 ;;
        --sf) SFS=${2:?--sf needs a value}; DEFAULT_SET=0; shift 2 ;;
        --seeds) SEEDS=${2:?--seeds needs a value}; DEFAULT_SET=0; shift 2 ;;
        --out) OUT=${2:?--out needs a value}; shift 2 ;;
        --work) WORK=${2:?--work needs a value}; shift 2 ;;
        --threads) THREADS=${2:?--threads needs a value}; shift 2 ;;
        *) echo "make-golden.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

if [ -z "$DKB_BIN" ]; then
    for b in "$ROOT/build-oracle/dkb" "$ROOT/build/dkb"; do
        [ -x "$b" ] && { DKB_BIN=$b; break; }
    done
fi
{ [ -n "$DKB_BIN" ] && [ -x "$DKB_BIN" ]; } || die "no dkb binary (build it, or pass --dkb BIN)"
"$DKB_BIN" sql --help >/dev/null 2>&1 || die "$DKB_BIN has no 'sql' command yet"
command -v node >/dev/null || die "node (Node.js 20) is not installed"
if [ ! -d "$ORACLE/node_modules/@duckdb/node-api" ]; then
    echo "== installing @duckdb/node-api (npm ci in tools/oracle)"
    (cd "$ORACLE" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed in $ORACLE"
fi
DUCKDB_VERSION=$(cd "$ORACLE" && node --input-type=module -e "
import { DuckDBInstance } from '@duckdb/node-api';
const c = await (await DuckDBInstance.create(':memory:')).connect();
console.log((await c.runAndReadAll('select version()')).getRows()[0][0]);")
NODE_API_VERSION=$(node -p "require('$ORACLE/node_modules/@duckdb/node-api/package.json').version")

if [ -z "$WORK" ]; then
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/dkb-golden.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK" "$OUT"
THREAD_OPT=()
GEN_THREADS=()
[ -n "$THREADS" ] && THREAD_OPT=(--threads "$THREADS") && GEN_THREADS=(-j "$THREADS")

QUERIES=$(seq -f 'q%02g' 1 22)
T_START=$(date +%s)
echo "== DuckDB $DUCKDB_VERSION (@duckdb/node-api $NODE_API_VERSION), dkb $DKB_BIN"
: >"$WORK/warnings"
for sf in $SFS; do
    t0=$(date +%s)
    d="$WORK/sf$sf"
    rm -rf "$d"
    mkdir -p "$d/sql" "$d/qual"
    echo "== SF $sf: dkb gen --format tbl"
    "$DKB_BIN" gen --sf "$sf" --format tbl --out "$d/tbl" -q "${GEN_THREADS[@]}"
    echo "== SF $sf: loading into DuckDB"
    node "$ORACLE/load.mjs" --tbl "$d/tbl" --db "$d/tpch.duckdb" -q "${THREAD_OPT[@]}"
    rm -rf "$d/tbl"
    files=()
    for s in $SEEDS; do
        for q in $QUERIES; do
            "$DKB_BIN" sql "$q" --seed "$s" --sf "$sf" >"$d/sql/$q-s$s.sql" ||
                die "dkb sql $q --seed $s --sf $sf failed"
            files+=("$d/sql/$q-s$s.sql")
        done
    done
    echo "== SF $sf: running ${#files[@]} queries"
    rm -rf "$OUT/sf$sf.new"
    rc=0
    node "$ORACLE/run.mjs" --db "$d/tpch.duckdb" --check-limit-ties "${THREAD_OPT[@]}" \
        --out-dir "$OUT/sf$sf.new" "${files[@]}" 2>>"$WORK/warnings" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || { cat "$WORK/warnings" >&2; die "DuckDB run failed at SF $sf"; }
    # Cross-check seed 0 against the qualification queries (Q11's FRACTION is
    # 0.0001/SF; the file holds the SF 1 value).
    case " $SEEDS " in *" 0 "*)
        if [ -d "$TPCH_SHARED/queries" ]; then
            frac=$(awk -v sf="$sf" 'BEGIN { printf "%.10f", 0.0001 / sf }')
            for q in $QUERIES; do
                sed "s/0\.0001000000/$frac/" "$TPCH_SHARED/queries/$q.sql" >"$d/qual/$q.sql"
            done
            node "$ORACLE/run.mjs" --db "$d/tpch.duckdb" "${THREAD_OPT[@]}" --out-dir "$d/qual" "$d"/qual/q*.sql
            nq=0
            for q in $QUERIES; do
                cmp -s "$d/qual/$q.csv" "$OUT/sf$sf.new/$q-s0.csv" ||
                    die "SF $sf $q: seed 0 (dkb sql) gives a different answer than the qualification query $TPCH_SHARED/queries/$q.sql"
                nq=$((nq + 1))
            done
            echo "== SF $sf: seed 0 answers equal the qualification queries' ($nq queries)"
        else
            echo "== SF $sf: $TPCH_SHARED/queries absent: seed 0 not cross-checked"
        fi ;;
    esac
    rm -rf "$OUT/sf$sf"
    mv "$OUT/sf$sf.new" "$OUT/sf$sf"
    echo "== SF $sf: ${#files[@]} answers in $OUT/sf$sf ($(cat "$OUT/sf$sf"/*.csv | wc -c) bytes, $(($(date +%s) - t0)) s)"
done

if [ "$DEFAULT_SET" = 1 ]; then
    {
        echo "# tests/answers/MANIFEST: written by tools/oracle/make-golden.sh; do not edit."
        echo "# DuckDB $DUCKDB_VERSION (@duckdb/node-api $NODE_API_VERSION)"
        echo "# columns: answer file, sha256 of the SQL it answers (dkb sql), sha256 of the CSV, data rows"
        for sf in $SFS; do
            for s in $SEEDS; do
                for q in $QUERIES; do
                    f="sf$sf/$q-s$s"
                    printf '%s %s %s %s\n' "$f.csv" \
                        "$(sha256sum <"$WORK/sf$sf/sql/$q-s$s.sql" | cut -d' ' -f1)" \
                        "$(sha256sum <"$OUT/$f.csv" | cut -d' ' -f1)" \
                        "$(($(wc -l <"$OUT/$f.csv") - 1))"
                done
            done
        done
    } >"$OUT/MANIFEST"
fi

n=$(find "$OUT" -name 'q*-s*.csv' | wc -l)
empty=$(find "$OUT" -name 'q*-s*.csv' -exec awk 'END { if (NR <= 1) print FILENAME }' {} \; | wc -l)
echo "== $n answer files, $(find "$OUT" -name 'q*-s*.csv' -exec cat {} + | wc -c) bytes in $OUT; $empty with no rows; $(($(date +%s) - T_START)) s"
if [ -s "$WORK/warnings" ]; then
    echo "== warnings:"
    sed 's/^/   /' "$WORK/warnings"
fi
