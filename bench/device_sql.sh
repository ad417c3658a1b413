#!/usr/bin/env bash
# device_sql.sh: issue 18's "Validate" on a GPU machine, in one call of at
# most 5 minutes (--budget, default 285 s, bounds the whole script):
#   corpus  the SQL corpus (tests/sql/corpus, as CTest cli.sql_corpus: the
#           same run and outcome rules, tests/cli/lib/sql_corpus_check.bash)
#           through the translator on --backend at each SF of --sfs, every
#           translated answer against DuckDB's on the same store (--check)
#   speed   the 22 TPC-H queries translated against the hand plans at the
#           speed SF (tools/sql_speed.sh: 5 runs, $(nproc) threads), the
#           table, the total ratio and every query over 1.25x flagged
# Order: the corpus at the smaller SFs, the speed table, then the corpus at
# the largest SF with the time left, its queries cheapest first (by their
# cost at the SF before); when the time runs out the rest is reported as
# not reached (a time-bounded subset), not as failures.
#   DKB_LIBDUCKDB=/path/libduckdb.so bench/device_sql.sh [options]
#   --dkb PATH       the dkb binary (default build-device/dkb)
#   --out DIR        sql.log (everything) and sql-summary.txt (default $OUT,
#                    else ./device-sql)
#   --sfs "1 10"     corpus scale factors (stores /tmp/dkb-sfSF, generated
#                    when manifest.json is missing, as bench/device_check.sh)
#   --speed-sf SF    the speed table's SF (default the largest of --sfs;
#                    none: no table)
#   --backend B      cuda (default) or cpu;  --runs N (default 5)
#   --budget S       seconds for the whole script (default 285)
# Prints a summary of at most 25 lines last. Exit 1 when a translated
# corpus query differs from DuckDB or fails in another way than "not
# translatable" (cli.sql_corpus's rules) or a step fails; 2 on bad usage.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# what the machine lacks (cJSON, libduckdb), carried in .devdeps/ (tools/devdeps.sh)
[ -f "$ROOT/.devdeps/env.sh" ] && source "$ROOT/.devdeps/env.sh"
source "$ROOT/tests/cli/lib/sql_corpus_check.bash"
DKB=$ROOT/build-device/dkb
OUTDIR=${OUT:-./device-sql}
SFS="1 10"
SPEED_SF=
BACKEND=cuda
RUNS=5
BUDGET=285
JOBS=$(nproc)
while [ $# -gt 0 ]; do
    case $1 in
    --dkb) DKB=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --sfs) SFS=$2; shift 2 ;;
    --speed-sf) SPEED_SF=$2; shift 2 ;;
    --backend) BACKEND=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "device_sql.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
case $BACKEND in cpu|cuda) ;; *) echo "device_sql.sh: --backend $BACKEND: cpu or cuda" >&2; exit 2 ;; esac
SFS=$(tr ' ' '\n' <<<"$SFS" | grep . | sort -g | tr '\n' ' ')
[ -n "$SFS" ] || { echo "device_sql.sh: --sfs is empty" >&2; exit 2; }
LAST_SF=${SFS% }; LAST_SF=${LAST_SF##* }
[ -n "$SPEED_SF" ] || SPEED_SF=$LAST_SF
[ -x "$DKB" ] || { echo "device_sql.sh: $DKB is not an executable (--dkb)" >&2; exit 2; }
DKB=$(cd "$(dirname "$DKB")" && pwd)/$(basename "$DKB")
CORPUS=$ROOT/tests/sql/corpus

START=$(date +%s)
left() { echo $((START + BUDGET - $(date +%s))); }
since() { echo $(($(date +%s) - $1)); }
mkdir -p "$OUTDIR" || exit 2
LOG=$OUTDIR/sql.log
SUM=$OUTDIR/sql-summary.txt
: >"$LOG"
: >"$SUM"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
log() { echo "$*" >>"$LOG"; }
say() { echo "$*" | tee -a "$LOG"; }     # progress, on stdout and in the log
sum() { echo "$*" >>"$SUM"; }            # a summary line (printed at the end)
status=0

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
sum "device_sql: backend $BACKEND, ${gpu:-no nvidia-smi}, $JOBS cores; $DKB; DuckDB ${DKB_LIBDUCKDB:-(DKB_LIBDUCKDB unset: the dkb search order)}"
log "git: $(git -C "$ROOT" log -1 --format='%h %cI' 2>/dev/null) $(git -C "$ROOT" status --short 2>/dev/null | wc -l) changed files; budget ${BUDGET}s; sfs $SFS; speed SF $SPEED_SF"

# the stores, as bench/device_check.sh makes them
gen_note=
for sf in $SFS $SPEED_SF; do
    [ "$sf" = none ] && continue
    st=/tmp/dkb-sf$sf
    [ -f "$st/manifest.json" ] && continue
    t=$(date +%s)
    if "$DKB" gen --sf "$sf" --out "$st" -j "$JOBS" -q --force >>"$LOG" 2>&1; then
        gen_note+=" SF $sf $(since "$t")s;"
    else
        sum "FAILED: dkb gen --sf $sf --out $st (see sql.log)"; status=1
    fi
done
[ -z "$gen_note" ] || sum "stores generated:$gen_note"

# can dkb sql load DuckDB and run on the backend at all? (on a store of SF
# 0.01 made for it: loading a large one into DuckDB takes seconds)
if ! probe=$({ "$DKB" gen --sf 0.01 --out "$TMP/sf0.01" -j "$JOBS" -q &&
    "$DKB" sql --data "$TMP/sf0.01" --backend "$BACKEND" -e 'SELECT 1 AS one'; } 2>&1); then
    sum "FAILED: dkb sql --backend $BACKEND -e 'SELECT 1 AS one': $(tail -1 <<<"$probe")"
    echo "---- summary ----"; cat "$SUM"; exit 1
fi

# corpus SF [LIMIT]: the corpus at one SF; LIMIT: stop after LIMIT seconds
prev_times=
prev_unreached=()
corpus() {
    local sf=$1 limit=${2:-} t l order='' bad0=${#SQLC_BAD[@]} note
    t=$(date +%s)
    if [ -n "$prev_times" ]; then
        # cheapest first by the time each outcome line took at the SF before
        # (the first file's own cost is unknown: the store's load precedes it)
        order=$TMP/order-sf$sf
        awk 'NR == 1 { p = $1; next } { c = $1 - p; p = $1 } NR == 2 { c = 0 }
             $2 == "dkb" && $3 == "sql:" && $4 ~ /\.sql:$/ { n = $4; sub(/.*\//, "", n); sub(/\.sql:$/, "", n); print c, n }' \
            "$prev_times" | sort -g -s -k1,1 | awk '{ print $2 }' >"$order"
        # what the SF before did not reach goes last
        printf '%s\n' "${prev_unreached[@]}" >>"$order"
    fi
    say "corpus SF $sf: $BACKEND, ${limit:+at most ${limit}s, }$(left)s of the budget left"
    SQLC_TIMEOUT=$limit SQLC_ORDER=$order SQLC_STAMP=1 \
        sql_corpus_check "$DKB" "$CORPUS" "/tmp/dkb-sf$sf" "SF $sf" "$TMP/sf$sf.txt" \
        --backend "$BACKEND" --threads "$JOBS" >"$TMP/sf$sf.out" 2>&1
    l=$?
    cat "$TMP/sf$sf.out" >>"$LOG"
    log "---- dkb sql --check at SF $sf: stderr, each line after the time it arrived ----"
    cat "$TMP/sf$sf.txt.times" >>"$LOG" 2>/dev/null
    if [ "$l" != 0 ]; then
        # where it stopped: the last outcome line before the crash
        sum "$(echo "corpus SF $sf: FAILED after $(since "$t")s: $SQLC_CRASH" | tr '\n' ' ' | cut -c1-300)"
        sum "  the last file that finished: $(grep -F "dkb sql: $CORPUS/" "$TMP/sf$sf.txt" | tail -1 | cut -c1-200)"
        status=1
        return
    fi
    prev_times=$TMP/sf$sf.txt.times
    prev_unreached=("${SQLC_UNREACHED_NAMES[@]}")
    note="corpus SF $sf: $SQLC_TRANSLATED of $SQLC_NQ translate, $SQLC_OK of $SQLC_TRANSLATED match DuckDB ($(since "$t")s)"
    [ "$SQLC_CUT" = 1 ] && note+="; TIME-BOUNDED: $SQLC_NQ of $((SQLC_NQ + SQLC_UNREACHED)) run in ${limit}s"
    sum "$note"
    if [ "$SQLC_CUT" = 1 ]; then
        sum "  not reached ($SQLC_UNREACHED, the costliest ${prev_times:+at the SF before}): $(printf '%s ' "${SQLC_UNREACHED_NAMES[@]}" | cut -c1-220)"
        log "not reached at SF $sf: ${SQLC_UNREACHED_NAMES[*]}"
    fi
    [ "${#SQLC_BAD[@]}" -gt "$bad0" ] && status=1
}

SQLC_BAD=()
for sf in $SFS; do
    [ "$sf" = "$LAST_SF" ] && break
    # leave the speed table and the largest SF at least two minutes
    lim=$(($(left) - 120)); [ "$lim" -ge 30 ] || lim=30
    corpus "$sf" "$lim"
done

# the speed table
if [ "$SPEED_SF" != none ]; then
    t=$(date +%s)
    lim=$(($(left) - 30)); [ "$lim" -ge 60 ] || lim=60
    say "speed SF $SPEED_SF: tools/sql_speed.sh, $BACKEND, $RUNS runs, $JOBS threads, at most ${lim}s"
    timeout -k 10 "$lim" bash "$ROOT/tools/sql_speed.sh" "$DKB" "/tmp/dkb-sf$SPEED_SF" "$RUNS" "$JOBS" "$BACKEND" \
        >"$TMP/speed.md" 2>"$TMP/speed.err"
    rc=$?
    cat "$TMP/speed.md" "$TMP/speed.err" >>"$LOG"
    if [ "$rc" = 0 ] && grep -q '^| all 22 |' "$TMP/speed.md"; then
        cat "$TMP/speed.md"
        sum "$(awk -F'|' -v sf="$SPEED_SF" -v s="$(since "$t")" -v b="$BACKEND" '
            / all 22 / { gsub(/ /, ""); tot = sprintf("hand %s ms, translated %s ms, %s", $3, $4, $5) }
            /^\| Q[0-9][0-9] / { q = $2; r = $5; gsub(/ /, "", q); gsub(/[ x]/, "", r); n++
                                 if (r + 0 > 1.25) { over = over sprintf(" %s %.2fx", q, r); k++ } }
            END { printf "speed SF %s (%s, %ss): all %d: %s; over 1.25x: %s", sf, b, s, n, tot, k ? k ":" over : "none" }' "$TMP/speed.md")"
    else
        sum "speed SF $SPEED_SF: FAILED: tools/sql_speed.sh exit $rc after $(since "$t")s$([ "$rc" = 124 ] && echo ' (time limit)') $(tail -2 "$TMP/speed.err" | tr '\n' ' ' | cut -c1-200)"
        status=1
    fi
fi

# the largest SF with what is left
lim=$(($(left) - 5))
if [ "$lim" -ge 10 ]; then
    corpus "$LAST_SF" "$lim"
else
    sum "corpus SF $LAST_SF: NOT RUN: ${lim}s of the budget left"
    status=1
fi

# the problems, one line each
if [ "${#SQLC_BAD[@]}" -gt 0 ]; then
    nm=$(printf '%s\n' "${SQLC_BAD[@]}" | grep -c ': mismatch: ')
    sum "problems: ${#SQLC_BAD[@]} ($nm mismatches, $((${#SQLC_BAD[@]} - nm)) other); the first 10:"
    for m in "${SQLC_BAD[@]}"; do
        tr '\n' ' ' <<<"$m" | sed "s|dkb sql: $CORPUS/[^ ]*\.sql: ||g; s/ *\$//"; echo
    done >"$TMP/problems"
    log "---- every problem ----"
    cat "$TMP/problems" >>"$LOG"
    head -10 "$TMP/problems" | cut -c1-220 | sed 's/^/  /' >>"$SUM"
fi
sum "total $(since "$START")s of ${BUDGET}s; exit $status; everything in $LOG"
echo "---- summary ----"
cat "$SUM"
exit $status
