#!/usr/bin/env bash
# gen_bench.sh: generation and import throughput of dkb, optionally side by
# side with dbgen, in one run on this machine.
#
# usage: bench/gen_bench.sh [--sf "1 10"] [--threads "1 2"] [--reps N]
#                           [--dbgen PATH/TO/dbgen] [--dbgen-reps N]
#                           [--dir SCRATCH] [--dkb PATH]
# Prints a Markdown table (median wall time of N runs; CPU seconds (user +
# system) of that run; MB/s of .tbl text and rows/s per wall second; peak RSS)
# and store size against .tbl size. CPU seconds compare generators fairly on
# a busy machine; wall seconds include writing the files. Needs GNU time.
set -euo pipefail
SFS="1 10"; THREADS="1 2"; REPS=3; DBGEN=""; DBGEN_REPS=1; DIR="${TMPDIR:-/tmp}/dkb-gen-bench"
DKB="$(cd "$(dirname "$0")/.." && pwd)/build/dkb"
while [ $# -gt 0 ]; do
    case "$1" in
    --sf) SFS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --dbgen) DBGEN=$(realpath "$2"); shift 2 ;;
    --dbgen-reps) DBGEN_REPS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --dkb) DKB=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gen_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$DKB" ] || { echo "gen_bench.sh: $DKB not built (make build)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "gen_bench.sh: needs GNU time (apt-get install time)" >&2; exit 1; }
mkdir -p "$DIR"

# run_timed OUTVAR CMD...: "wall cpu rss" of the median-wall run of REPS
# (seconds, user + system seconds, max RSS in MiB over all runs).
run_timed() {
    local var=$1; shift
    local runs=() rss=0 t m u s
    for _ in $(seq "$REPS"); do
        /usr/bin/time -f "%e %M %U %S" -o "$DIR/time.txt" "$@" >/dev/null 2>"$DIR/err.txt" ||
            { cat "$DIR/err.txt" >&2; exit 1; }
        read -r t m u s <"$DIR/time.txt"
        runs+=("$t $(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')"); [ "$m" -gt "$rss" ] && rss=$m
    done
    local med
    med=$(printf '%s\n' "${runs[@]}" | sort -n | awk '{a[NR]=$0} END {print a[int((NR+1)/2)]}')
    printf -v "$var" '%s %s' "$med" "$((rss / 1024))"
}

echo "# dkb gen benchmark: $(uname -n), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%d)"
echo "median of $REPS runs (dbgen: $DBGEN_REPS); wall seconds including writing the files (fsync'ed); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| what | SF | threads | wall s | CPU s | MB/s (.tbl text) | rows/s | peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|"
for sf in $SFS; do
    tbl="$DIR/sf$sf-tbl"
    "$DKB" gen --sf "$sf" --format tbl --out "$tbl" --force -q
    bytes=$(cat "$tbl"/*.tbl | wc -c); rows=$(cat "$tbl"/*.tbl | wc -l)
    row() { # label threads "wall cpu rss"
        local w c r
        read -r w c r <<<"$3"
        awk -v l="$1" -v sf="$sf" -v j="$2" -v s="$w" -v c="$c" -v b="$bytes" -v n="$rows" -v r="$r" \
            'BEGIN {printf "| %s | %s | %s | %.2f | %.2f | %.0f | %.0f | %s |\n", l, sf, j, s, c, b/s/1e6, n/s, r}'
    }
    for j in $THREADS; do
        run_timed res "$DKB" gen --sf "$sf" --format tbl --out "$DIR/g" --force -q -j "$j"
        row "dkb gen --format tbl" "$j" "$res"
        run_timed res "$DKB" gen --sf "$sf" --out "$DIR/s" --force -q -j "$j"
        row "dkb gen (store)" "$j" "$res"
        run_timed res "$DKB" import "$tbl" --out "$DIR/i" --force -q -j "$j"
        row "dkb import" "$j" "$res"
    done
    if [ -n "$DBGEN" ]; then
        mkdir -p "$DIR/dbgen"
        cp "$(dirname "$DBGEN")/dists.dss" "$DIR/dbgen/" 2>/dev/null || true
        (cd "$DIR/dbgen" && REPS=$DBGEN_REPS && run_timed res "$DBGEN" -s "$sf" -f && row "dbgen 2.14" 1 "$res")
    fi
    store_bytes=$(du -sb "$DIR/s" | cut -f1)
    echo "| store size vs .tbl | $sf | | | | $(awk -v a="$store_bytes" -v b="$bytes" 'BEGIN {printf "%.0f MB store / %.0f MB tbl = %.2f", a/1e6, b/1e6, a/b}') | | |"
    rm -rf "$DIR/g" "$DIR/s" "$DIR/i" "$tbl" "$DIR"/dbgen/*.tbl
done
