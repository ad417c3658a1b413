# sql_corpus_check.bash: the SQL corpus against DuckDB on one store (sourced,
# not run), shared by tests/cli/sql_corpus.sh (CTest cli.sql_corpus, CPU,
# SF 0.01 and 0.1) and bench/device_sql.sh (the same check on a GPU machine,
# SF 1 and 10), so both judge the outcomes the same way.
#
#   sql_corpus_check DKB CORPUS STORE LABEL LOG [DKB SQL OPTION...]
#
# runs `DKB sql --data STORE --check OPTION... -f F ...` over every
# CORPUS/*.sql in one process (one load of the store), its stderr in LOG,
# then reads each file's outcome from the lines "dkb sql: F: ..." of LOG:
#   - exactly one line, "...: check against DuckDB: ok, ...": matched;
#   - exactly one line, "...: error: not translatable to TensorPlan: ...":
#     refused, printed as "unsupported at LABEL: NAME: ERROR";
#   - anything else (a mismatch, another error, no line, several lines): a
#     problem, appended to the array SQLC_BAD as "LABEL NAME: LINES".
# Also problems: an unsupported_*.sql that translates (rename it), a refused
# query not named unsupported_*, fewer than 90 % of the queries translated.
# Prints "sql_corpus LABEL: T of N queries translate (P %), K of T translated
# match DuckDB". Sets SQLC_NQ, SQLC_OK, SQLC_REFUSED, SQLC_TRANSLATED (the
# caller initialises SQLC_BAD=() once and reads it after all its calls).
#
# Options for bench/device_sql.sh, all unset in cli.sql_corpus:
# SQLC_TIMEOUT=S: stop dkb sql after S seconds; when it was stopped, the
#   files it did not reach (no line at all) are counted in SQLC_UNREACHED
#   (names in the array SQLC_UNREACHED_NAMES), not as problems, the counts
#   above and the 90 % rule are over the files reached, and SQLC_CUT=1.
#   Otherwise SQLC_UNREACHED=0 and SQLC_CUT=0.
# SQLC_ORDER=FILE: query names (file stems), one a line: run in that order,
#   after the corpus files it does not name (in glob order).
# SQLC_STAMP=1: also write LOG.times, each line of LOG prefixed with the
#   time it arrived ($EPOCHREALTIME), after a first line "TIME start".
#
# Returns 0, or 2 when dkb sql exits other than 0 or 1 (a crash) or was
# stopped before any file finished: nothing is classified then, and
# SQLC_CRASH holds the message.
sql_corpus_check() {
    local dkb=$1 corpus=$2 store=$3 label=$4 log=$5
    shift 5
    local files=() cmd f name lines rc=0 ok=0 refused=0 unreached=0 nq=0
    if [ -n "${SQLC_ORDER:-}" ]; then
        for f in "$corpus"/*.sql; do grep -qxF "$(basename "$f" .sql)" "$SQLC_ORDER" || files+=(-f "$f"); done
        while read -r name; do [ -f "$corpus/$name.sql" ] && files+=(-f "$corpus/$name.sql"); done <"$SQLC_ORDER"
    else
        for f in "$corpus"/*.sql; do files+=(-f "$f"); done
    fi
    cmd=("$dkb" sql --data "$store" --check "$@" "${files[@]}")
    [ -z "${SQLC_TIMEOUT:-}" ] || cmd=(timeout -k 10 "$SQLC_TIMEOUT" "${cmd[@]}")
    SQLC_CUT=0 SQLC_CRASH='' SQLC_UNREACHED_NAMES=()
    if [ "${SQLC_STAMP:-0}" = 1 ]; then
        echo "$EPOCHREALTIME start" >"$log.times"
        "${cmd[@]}" 2>&1 >/dev/null | while IFS= read -r f; do
            printf '%s\n' "$f" >&3
            printf '%s %s\n' "$EPOCHREALTIME" "$f"
        done 3>"$log" >>"$log.times"
        rc=${PIPESTATUS[0]}
    else
        "${cmd[@]}" 2>"$log" >/dev/null || rc=$?
    fi
    if [ -n "${SQLC_TIMEOUT:-}" ] && { [ "$rc" = 124 ] || [ "$rc" = 137 ]; }; then
        SQLC_CUT=1 rc=1
        grep -q ": check against DuckDB: \|: error: " "$log" ||
            { SQLC_CRASH="dkb sql at $label: stopped after ${SQLC_TIMEOUT}s before any file finished"; return 2; }
    fi
    if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
        SQLC_CRASH="dkb sql exited $rc at $label (crash?): $(tail -3 "$log")"
        return 2
    fi
    for f in "$corpus"/*.sql; do
        name=$(basename "$f" .sql)
        lines=$(grep -F "dkb sql: $f: " "$log" || true)
        if [ "$SQLC_CUT" = 1 ] && [ -z "$lines" ]; then
            unreached=$((unreached + 1))
            SQLC_UNREACHED_NAMES+=("$name")
            continue
        fi
        nq=$((nq + 1))
        if grep -q ": check against DuckDB: ok, " <<<"$lines" && [ "$(wc -l <<<"$lines")" = 1 ]; then
            ok=$((ok + 1))
            case $name in unsupported_*) SQLC_BAD+=("$label $name: translated, but listed as unsupported (rename it)") ;; esac
        elif grep -q ": error: not translatable to TensorPlan: " <<<"$lines" && [ "$(wc -l <<<"$lines")" = 1 ]; then
            refused=$((refused + 1))
            echo "unsupported at $label: $name: ${lines#*: error: }"
            case $name in unsupported_*) ;; *) SQLC_BAD+=("$label $name: refused: ${lines#*: error: }") ;; esac
        else
            SQLC_BAD+=("$label $name: ${lines:-no outcome line}")
        fi
    done
    SQLC_NQ=$nq SQLC_OK=$ok SQLC_REFUSED=$refused SQLC_TRANSLATED=$((nq - refused)) SQLC_UNREACHED=$unreached
    echo "sql_corpus $label: $SQLC_TRANSLATED of $nq queries translate ($((nq ? 100 * SQLC_TRANSLATED / nq : 0)) %), $ok of $SQLC_TRANSLATED translated match DuckDB"
    [ $((100 * SQLC_TRANSLATED)) -ge $((90 * nq)) ] || SQLC_BAD+=("$label: only $SQLC_TRANSLATED of $nq translate (< 90 %)")
    return 0
}
