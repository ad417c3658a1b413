#!/usr/bin/env bash
# cpu_vs_duckdb.sh: per-query time of the 22 TPC-H CPU baseline plans beside
# DuckDB on the same data and thread count, with each dkb answer checked
# against DuckDB's, in one run on this machine.
#
# usage: bench/cpu_vs_duckdb.sh [--sf SF] [--threads N] [--warmup W] [--runs R]
#                               [--seed S] [--store DIR] [--tbl DIR]
#                               [--dir SCRATCH] [--dkb PATH]
#                               [--experts] [--experts-dir DIR]
# Defaults: SF 1, 2 threads, 1 warm-up, 5 runs, seed 0. The store and the
# .tbl files are generated under SCRATCH (default $TMPDIR/dkb-cpu-vs-duckdb)
# unless given, and reused when present. DuckDB loads the .tbl files into an
# in-memory database (SET threads=N); each side's time is the median query
# time with the data already loaded (dkb: `dkb run all --time`, store open
# not included; DuckDB: runAndReadAll, i.e. executing and materialising the
# result). Prints a Markdown table: query, dkb ms, DuckDB ms, ratio
# dkb/DuckDB, whether dkb's answer equals DuckDB's; then totals.
# --experts (issue 6): in the same run, also time the expert implementations
# (src/kernels/cpu/qNN.full.c, or --experts-dir DIR) with `dkb bench --backend
# cpu --threads N` on the same store: the harness checks each expert on seed
# 0 plus 5 random seeds against the baseline, then times it interleaved with
# the baseline (2 warm-ups, at least 10 runs and 1 s; median). A second table
# follows: query, DuckDB ms, baseline ms (dkb run), expert ms, expert/DuckDB,
# whether the expert passed, and the harness's time/floor; then totals.
# Needs Node.js 20 and tools/oracle/node_modules (npm ci in tools/oracle).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ORACLE="$ROOT/tools/oracle"
SF=1; THREADS=2; WARMUP=1; RUNS=5; SEED=0; STORE=""; TBL=""
DIR="${TMPDIR:-/tmp}/dkb-cpu-vs-duckdb"
DKB="$ROOT/build/dkb"
EXPERTS=0; EXPERTS_DIR=""
die() { echo "cpu_vs_duckdb.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case "$1" in
    --sf) SF=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --store) STORE=$(realpath "$2"); shift 2 ;;
    --tbl) TBL=$(realpath "$2"); shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --dkb) DKB=$(realpath "$2"); shift 2 ;;
    --experts) EXPERTS=1; shift ;;
    --experts-dir) EXPERTS=1; EXPERTS_DIR=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cpu_vs_duckdb.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$DKB" ] || die "$DKB not built (make build, or --dkb PATH)"
"$DKB" run --help >/dev/null 2>&1 || die "$DKB has no 'run' command"
command -v node >/dev/null || die "node (Node.js 20) is not installed"
[ -d "$ORACLE/node_modules/@duckdb/node-api" ] || die "DuckDB is not installed: cd tools/oracle && npm ci"
mkdir -p "$DIR"

# Data: a store and .tbl files of scale factor SF (dkb gen writes atomically,
# so a directory that exists is complete).
if [ -z "$STORE" ]; then
    STORE="$DIR/sf$SF"
    [ -d "$STORE" ] || "$DKB" gen --sf "$SF" --out "$STORE" -q
fi
if [ -z "$TBL" ]; then
    TBL="$DIR/sf$SF-tbl"
    [ -d "$TBL" ] || "$DKB" gen --sf "$SF" --format tbl --out "$TBL" -q
fi
store_sf=$("$DKB" info "$STORE" --format json | sed -n 's/.*"scale_factor": *\([0-9.e+-]*\).*/\1/p' | head -1)
awk -v a="$store_sf" -v b="$SF" 'BEGIN { exit !(a == b) }' || die "$STORE is SF $store_sf, not SF $SF"

# The SQL of each query for this seed and SF, named as dkb's goldens.
rm -rf "$DIR/sql" "$DIR/duckdb"
mkdir -p "$DIR/sql" "$DIR/duckdb"
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    "$DKB" sql "$q" --seed "$SEED" --sf "$SF" >"$DIR/sql/$q-s$SEED.sql"
done

LOAD_BEFORE=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
# DuckDB: medians, and the CSV of each query's last run.
node "$ORACLE/run.mjs" --tbl "$TBL" --threads "$THREADS" --bench "$WARMUP,$RUNS" \
    --out-dir "$DIR/duckdb" "$DIR"/sql/q*.sql >"$DIR/duckdb.tsv" || die "DuckDB run failed"

# dkb: all 22 plans, medians from its own timing.
"$DKB" run all --data "$STORE" --seed "$SEED" --threads "$THREADS" --warmup "$WARMUP" --runs "$RUNS" \
    --format json >"$DIR/dkb.json" || die "dkb run all failed"
node -e '
const a = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
for (const q of a) console.log(`${q.query}-s${q.seed}\t${q.timing.median_ms}`);' "$DIR/dkb.json" >"$DIR/dkb.tsv"

# Answers: each dkb result against DuckDB's.
"$DKB" run all --data "$STORE" --seed "$SEED" --threads "$THREADS" --expect-dir "$DIR/duckdb" \
    >"$DIR/check.txt" 2>&1 || true

# Experts: the harness's per-query medians (expert and its own baseline), the
# pass flag and time/floor, as CSV.
if [ "$EXPERTS" = 1 ]; then
    rm -rf "$DIR/experts"
    "$DKB" bench --backend cpu --data "$STORE" --threads "$THREADS" ${EXPERTS_DIR:+--experts "$EXPERTS_DIR"} \
        --out "$DIR/experts" --format csv -q >"$DIR/experts.csv" || die "dkb bench --backend cpu failed (see $DIR/experts/results.json)"
fi

LOAD_AFTER=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
DUCKDB_VERSION=$(node -p "require('$ORACLE/node_modules/@duckdb/node-api/package.json').version")
echo "# CPU plans vs DuckDB: $(uname -n), $(nproc) cores, $(date -u +%Y-%m-%d), dkb $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), @duckdb/node-api $DUCKDB_VERSION"
echo
echo "SF $SF, seed $SEED, $THREADS threads on both sides; median of $RUNS runs after $WARMUP warm-up(s); data in memory before timing.
1-minute load average $LOAD_BEFORE before, $LOAD_AFTER after (other work on the machine inflates both sides' times)."
echo
echo "| query | dkb ms | DuckDB ms | dkb/DuckDB | answer |"
echo "|---|---:|---:|---:|---|"
awk -F'\t' -v seed="$SEED" -v check="$DIR/check.txt" '
    FILENAME == ARGV[1] { dkb[$1] = $2; next }
    { duck[$1] = $2 }
    END {
        while ((getline line < check) > 0) {
            split(line, w, " ")
            if (line ~ /^q[0-9][0-9] .*: ok/) ok[w[1]] = 1
        }
        for (n = 1; n <= 22; n++) {
            q = sprintf("q%02d", n); k = q "-s" seed
            d = dkb[k]; u = duck[k]
            if (d == "" || u == "") { printf "| %s | %s | %s | - | missing |\n", q, d, u; bad++; continue }
            r = d / u; td += d; tu += u; lg += log(r); m++
            if (!ok[q]) bad++
            printf "| %s | %.1f | %.1f | %.2f | %s |\n", q, d, u, r, ok[q] ? "same" : "DIFFERS"
        }
        printf "| **total** | **%.1f** | **%.1f** | **%.2f** | %d of 22 same |\n", td, tu, tu ? td / tu : 0, 22 - bad
        if (m) printf "\nGeometric mean of the per-query ratios: %.2f (above 1: dkb slower).\n", exp(lg / m)
    }' "$DIR/dkb.tsv" "$DIR/duckdb.tsv"
if grep -q "error" "$DIR/check.txt"; then
    echo
    echo "Differences (dkb run --expect-dir against DuckDB's CSVs):"
    echo
    grep "error" "$DIR/check.txt" | sed 's/^/    /'
fi
[ "$EXPERTS" = 1 ] || exit 0

# Second table: the experts beside DuckDB and the baseline, same run.
echo
echo "Experts ($(basename "${EXPERTS_DIR:-src/kernels/cpu}")/qNN.full.c through \`dkb bench --backend cpu --threads $THREADS\`, same store): median of"
echo "at least 10 runs and 1 s after 2 warm-ups, timed interleaved with the harness's baseline; pass: checked on seed 0 and 5 random seeds."
echo
echo "| query | DuckDB ms | baseline ms | expert ms | expert/DuckDB | pass | time/floor |"
echo "|---|---:|---:|---:|---:|---|---:|"
awk -F'\t' -v seed="$SEED" -v experts="$DIR/experts.csv" '
    FILENAME == ARGV[1] { dkb[$1] = $2; next }
    { duck[$1] = $2 }
    END {
        # experts.csv: query,class,pass,baseline_ms,expert_ms,speedup,floor_ms,time_floor
        while ((getline line < experts) > 0) {
            split(line, f, ",")
            if (f[1] !~ /^q[0-9][0-9]$/) continue
            cls[f[1]] = f[2]; pass[f[1]] = f[3]; ex[f[1]] = f[5]; tf[f[1]] = f[8]
        }
        for (n = 1; n <= 22; n++) {
            q = sprintf("q%02d", n); k = q "-s" seed
            d = dkb[k]; u = duck[k]; e = ex[q]
            if (u == "" || e == "" || pass[q] != "yes") {
                printf "| %s | %s | %s | %s | - | %s | %s |\n", q, u, d, e, pass[q] == "" ? "missing" : pass[q] " (" cls[q] ")", tf[q]
                bad++; continue
            }
            r = e / u; te += e; tu += u; td += d; lg += log(r); m++
            printf "| %s | %.1f | %.1f | %.2f | %.2f | yes | %.1f |\n", q, u, d, e, r, tf[q]
        }
        printf "| **total** | **%.1f** | **%.1f** | **%.1f** | **%.2f** | %d of 22 pass | |\n", tu, td, te, tu ? te / tu : 0, 22 - bad
        if (m) printf "\nGeometric mean of the per-query expert/DuckDB ratios: %.2f. Totals over the %d passing queries.\n", exp(lg / m), m
    }' "$DIR/dkb.tsv" "$DIR/duckdb.tsv"
