#!/usr/bin/env bash
# gen_bench.sh: generation and import throughput of dkb, optionally side by
# side with dbgen, in one run on this machine.
#
# usage: bench/gen_bench.sh [--sf "1 10"] [--threads "1 2"] [--reps N]
#                           [--dbgen PATH/TO/dbgen] [--dir SCRATCH] [--dkb PATH]
# Prints a Markdown table (median wall time of N runs; MB/s of .tbl text,
# rows/s, peak RSS) and store size against .tbl size. Needs GNU time.
set -euo pipefail
SFS="1 10"; THREADS="1 2"; REPS=3; DBGEN=""; DIR="${TMPDIR:-/tmp}/dkb-gen-bench"
DKB="$(cd "$(dirname "$0")/.." && pwd)/build/dkb"
while [ $# -gt 0 ]; do
    case "$1" in
    --sf) SFS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --dbgen) DBGEN=$(realpath "$2"); shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --dkb) DKB=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gen_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$DKB" ] || { echo "gen_bench.sh: $DKB not built (make build)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "gen_bench.sh: needs GNU time (apt-get install time)" >&2; exit 1; }
mkdir -p "$DIR"

# run_timed OUTVAR CMD...: median wall seconds and max RSS (MiB) over REPS runs.
run_timed() {
    local var=$1; shift
    local times=() rss=0 t m
    for _ in $(seq "$REPS"); do
        /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$@" >/dev/null 2>"$DIR/err.txt" ||
            { cat "$DIR/err.txt" >&2; exit 1; }
        read -r t m <"$DIR/time.txt"
        times+=("$t"); [ "$m" -gt "$rss" ] && rss=$m
    done
    local med
    med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    printf -v "$var" '%s %s' "$med" "$((rss / 1024))"
}

echo "# dkb gen benchmark: $(uname -n), $(nproc) cores, $(date -u +%Y-%m-%d), median of $REPS"
echo
echo "| what | SF | threads | seconds | MB/s (.tbl text) | rows/s | peak RSS MiB |"
echo "|---|---|---|---|---|---|---|"
for sf in $SFS; do
    tbl="$DIR/sf$sf-tbl"
    "$DKB" gen --sf "$sf" --format tbl --out "$tbl" --force -q
    bytes=$(cat "$tbl"/*.tbl | wc -c); rows=$(cat "$tbl"/*.tbl | wc -l)
    row() { # label threads "secs rss"
        local s=${3% *} r=${3#* }
        awk -v l="$1" -v sf="$sf" -v j="$2" -v s="$s" -v b="$bytes" -v n="$rows" -v r="$r" \
            'BEGIN {printf "| %s | %s | %s | %.2f | %.0f | %.0f | %s |\n", l, sf, j, s, b/s/1e6, n/s, r}'
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
        (cd "$DIR/dbgen" && run_timed res "$DBGEN" -s "$sf" -f && row "dbgen 2.14" 1 "$res")
    fi
    store_bytes=$(du -sb "$DIR/s" | cut -f1)
    echo "| store size vs .tbl | $sf | | | $(awk -v a="$store_bytes" -v b="$bytes" 'BEGIN {printf "%.0f MB store / %.0f MB tbl = %.2f", a/1e6, b/1e6, a/b}') | | |"
    rm -rf "$DIR/g" "$DIR/s" "$DIR/i" "$tbl" "$DIR"/dbgen/*.tbl
done
