#!/usr/bin/env bash
# harness_overhead.sh: how long `dkb eval` takes to judge one simple
# candidate (compile, symbol check, seed 0 plus N random seeds checked,
# baseline and candidate timed interleaved), at each scale factor; the aim
# (issue 4) is under 5 s plus the compile time at SF 1.
#
# usage: bench/harness_overhead.sh [--sf "0.1 1"] [--candidate FILE]
#                                  [--threads N] [--seeds N] [--reps R]
#                                  [--dir SCRATCH] [--dkb PATH] [-- EVAL-OPTS...]
# Defaults: SF 0.1 and 1, tests/candidates/honest/q06.full.c, 0 threads (all
# cores), 5 seeds, 3 repetitions (the table shows the median repetition by
# total time). Stores are generated under SCRATCH (default
# $TMPDIR/dkb-harness-overhead) unless present. Anything after -- goes to
# `dkb eval` (e.g. --min-seconds 0.5). Prints a Markdown table per SF: wall
# time of the whole `dkb eval`, the compile time (results.json compile_s),
# total minus compile, the worker's time (run_s), the baseline and candidate
# medians and the candidate's class.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SFS="0.1 1"; CAND="$ROOT/tests/candidates/honest/q06.full.c"; THREADS=0; SEEDS=5; REPS=3
DIR="${TMPDIR:-/tmp}/dkb-harness-overhead"
DKB="$ROOT/build/dkb"
EXTRA=()
die() { echo "harness_overhead.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case "$1" in
    --sf) SFS=$2; shift 2 ;;
    --candidate) CAND=$(realpath "$2"); shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --dkb) DKB=$(realpath "$2"); shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "harness_overhead.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$DKB" ] || die "$DKB not built (make build, or --dkb PATH)"
"$DKB" eval --help >/dev/null 2>&1 || die "$DKB has no 'eval' command"
[ -f "$CAND" ] || die "$CAND: no such candidate"
name=$(basename "$CAND")
case "$name" in q[0-9][0-9].full.c) MODE=full ;; q[0-9][0-9].core.c) MODE=core ;; *) die "$name is not qNN.full.c or qNN.core.c" ;; esac
mkdir -p "$DIR/cand"
rm -f "$DIR"/cand/*
cp "$CAND" "$DIR/cand/"

now() { date +%s.%N; }
# json_num FILE KEY: the first number after "KEY": in FILE (cJSON's layout)
json_num() { sed -n "s/.*\"$2\":[[:space:]]*\([0-9.eE+-]*\).*/\1/p" "$1" | head -1; }
json_str() { sed -n "s/.*\"$2\":[[:space:]]*\"\([^\"]*\)\".*/\1/p" "$1" | head -1; }
# the median of the baseline / candidate timing objects
json_median() {
    awk -v k="\"$2\":" 'index($0, k) { if ($0 ~ /null/) exit; on = 1; next }
        on && /"median":/ { gsub(/[^0-9.eE+-]/, "", $2); print $2; exit }' "$1"
}

echo "# dkb eval overhead: $name, $SEEDS random seeds + seed 0, threads $THREADS, $REPS repetitions"
echo
echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| SF | total s | compile s | total - compile s | worker s | baseline ms | candidate ms | class |"
echo "|---:|---:|---:|---:|---:|---:|---:|---|"
for sf in $SFS; do
    store="$DIR/sf$sf"
    [ -d "$store" ] || "$DKB" gen --sf "$sf" --out "$store" -q
    rows=()
    for rep in $(seq 1 "$REPS"); do
        out="$DIR/results-sf$sf-$rep"
        t0=$(now)
        "$DKB" eval "$DIR/cand" --data "$store" --out "$out" --mode "$MODE" --seeds "$SEEDS" --threads "$THREADS" \
            -q --format csv "${EXTRA[@]}" >/dev/null || die "dkb eval failed at SF $sf"
        t1=$(now)
        R="$out/results.json"
        total=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        compile=$(json_num "$R" compile_s)
        run=$(json_num "$R" run_s)
        rows+=("$(awk -v t="$total" -v c="$compile" -v r="$run" -v sf="$sf" -v b="$(json_median "$R" baseline_ms)" \
            -v m="$(json_median "$R" candidate_ms)" -v cl="$(json_str "$R" class)" \
            'BEGIN { printf "%s | %.2f | %.2f | %.2f | %.2f | %s | %s | %s\n", sf, t, c, t - c, r,
                     b == "" ? "-" : sprintf("%.3f", b), m == "" ? "-" : sprintf("%.3f", m), cl }')")
    done
    # the repetition with the median total time
    printf '%s\n' "${rows[@]}" | sort -t'|' -k2,2n | sed -n "$(( (REPS + 1) / 2 ))p" | sed 's/^/| /; s/$/ |/'
done
echo
echo "total: wall time of \`dkb eval\` (store probe, build, worker, reports); compile: the compiler and symbol"
echo "check; worker: the sandboxed runs (checks on every seed, the timing loop, the bandwidth probe)."
