#!/usr/bin/env bash
# sql_speed.sh: the 22 TPC-H queries translated from SQL against the
# hand-written plans on one store, as docs/sql.md's table: per query the
# medians of `dkb sql --time RUNS --hand` (one process, DuckDB loads the
# store once; each translated run is followed by a run of the hand plan
# qNN at seed 0, so both see the same machine) and their ratio.
#   tools/sql_speed.sh DKB STORE [RUNS [THREADS [BACKEND]]]
# DKB: the dkb binary; STORE: a store (dkb gen --sf 1 --out STORE); RUNS
# (default 7) timed runs after one warm-up; THREADS (default 2); BACKEND
# (default cpu).
set -euo pipefail
dkb=${1:?usage: sql_speed.sh DKB STORE [RUNS [THREADS [BACKEND]]]}
store=${2:?usage: sql_speed.sh DKB STORE [RUNS [THREADS [BACKEND]]]}
runs=${3:-7}
threads=${4:-2}
backend=${5:-cpu}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=()
for n in $(seq -w 1 22); do
    "$dkb" sql "q$n" >"$work/q$n.sql"
    args+=(-f "$work/q$n.sql")
done
"$dkb" sql --data "$store" --backend "$backend" --threads "$threads" --time "$runs" --hand --format csv "${args[@]}" \
    2>"$work/time.txt" >/dev/null
printf '| query | hand plan ms | translated ms | ratio |\n|---|---:|---:|---:|\n'
awk '/: time: translated program median/ { for (i = 1; i <= NF; i++) if ($i == "median") t = $(i + 1) }
     /: time: hand plan q[0-9][0-9] median/ {
         for (i = 1; i <= NF; i++) { if ($i == "plan") q = $(i + 1); if ($i == "median") h = $(i + 1) }
         printf "| %s | %.1f | %.1f | %.2fx |\n", toupper(q), h, t, t / h; T += t; H += h
     }
     END { printf "| all 22 | %.1f | %.1f | %.2fx |\n", H, T, T / H }' "$work/time.txt"
