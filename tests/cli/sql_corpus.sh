# sql_corpus.sh: the SQL corpus (tests/sql/corpus/*.sql, one query per
# file over the TPC-H schema: projections, filters, groupings, joins of
# every kind, subqueries, IN lists, CASE, COUNT DISTINCT, HAVING,
# ORDER BY/LIMIT/OFFSET, empty results, NULLs, decimals, dates, strings)
# through the translator on the CPU, each answer checked against DuckDB's
# own answer to the same SQL over the same store (dkb sql --check) at SF
# 0.01 and SF 0.1, and at SF 0.01 again with aggregates over joins run in
# runs of at most 1000 pairs (DKB_SQL_JOIN_PAIRS). Reports the share
# translated and the share matching;
# every query the translator refuses is listed with its one-line error.
# Fails when a translated query differs from DuckDB, when a query fails in
# any other way than "not translatable to TensorPlan: ...", when a
# refused query is not one of the unsupported_*.sql files (which stand for
# constructs known not to translate, and must stay refused, not answered
# wrongly), or when fewer than 90 % translate.
# libduckdb comes from tools/install-deps.sh: when it cannot be found this
# test FAILS, unless DKB_ALLOW_NO_DUCKDB=1, where it exits 77.
source "$(dirname "$0")/lib/common.bash"
# the run and the outcome rules above (shared with bench/device_sql.sh)
source "$(dirname "$0")/lib/sql_corpus_check.bash"

CORPUS=$(cd "$(dirname "$0")/../sql/corpus" 2>/dev/null && pwd) || fail "tests/sql/corpus is missing"
SFS="0.01 0.1"

"$DKB" gen --sf 0.01 --out "$WORK/sf0.01" -q || fail "dkb gen --sf 0.01 failed"
need_duckdb "$WORK/sf0.01" 'SELECT 1 AS one'
"$DKB" gen --sf 0.1 --out "$WORK/sf0.1" -q || fail "dkb gen --sf 0.1 failed"

files=()
for f in "$CORPUS"/*.sql; do files+=(-f "$f"); done
nq=$((${#files[@]} / 2))
[ "$nq" -ge 150 ] || fail "the corpus holds $nq queries, fewer than 150"

SQLC_BAD=()
for sf in $SFS; do
    sql_corpus_check "$DKB" "$CORPUS" "$WORK/sf$sf" "SF $sf" "$WORK/sf$sf.txt" || fail "$SQLC_CRASH"
done
# Once more at SF 0.01 with a pair limit of 1000 (src/sql/translate_chunk.c):
# every aggregate over a join of more pairs runs the join in runs of rows
# and merges the runs' partials, as a join of billions of pairs does at
# scale. The same outcome rules; and the runs must have happened.
export DKB_SQL_JOIN_PAIRS=1000
sql_corpus_check "$DKB" "$CORPUS" "$WORK/sf0.01" "SF 0.01, pair limit 1000" "$WORK/chunked.txt" || fail "$SQLC_CRASH"
"$DKB" sql --data "$WORK/sf0.01" --explain=tensorplan "${files[@]}" >"$WORK/chunked_plans.txt" 2>/dev/null || true
unset DKB_SQL_JOIN_PAIRS
runs=$(grep -c " runs of at most 1000 pairs" "$WORK/chunked_plans.txt" || true)
[ "$runs" -ge 10 ] || fail "only $runs corpus queries aggregated a join in runs under a pair limit of 1000 (10 or more expected)"
echo "sql_corpus: $runs queries aggregated their join in runs under a pair limit of 1000"
bad=("${SQLC_BAD[@]}")
for m in "${bad[@]}"; do echo "FAIL: $m" >&2; done
[ "${#bad[@]}" = 0 ] || fail "${#bad[@]} corpus problems"
pass "every translated corpus query matches DuckDB at SF ${SFS// /, SF }; the refused ones are listed above"

# the join-reuse path is what join_memo_subset.sql checks at SF 0.1 (its
# answer alone would pass without it), and join_memo_duplicates.sql must not take it
for q in subset:1 duplicates:0; do
    n=$("$DKB" sql --data "$WORK/sf0.1" --explain=tensorplan -f "$CORPUS/join_memo_${q%:*}.sql" 2>&1 | grep -c "pairs from the join of" || true)
    [ "$n" = "${q#*:}" ] || fail "join_memo_${q%:*}.sql at SF 0.1: $n joins took an earlier join's pairs, expected ${q#*:}"
done
pass "join_memo_subset.sql reuses an earlier join's pairs at SF 0.1; join_memo_duplicates.sql does not"

# a refused construct is one line naming it, exit 1, nothing on stdout
rc=0
so=$("$DKB" sql --data "$WORK/sf0.01" -f "$CORPUS/unsupported_window.sql" 2>"$WORK/err.txt") || rc=$?
[ "$rc" = 1 ] && [ -z "$so" ] && [ "$(wc -l <"$WORK/err.txt")" = 1 ] &&
    grep -q '^dkb sql: error: not translatable to TensorPlan: operator WINDOW$' "$WORK/err.txt" ||
    fail "a window function: exit $rc, stdout '$so', stderr '$(cat "$WORK/err.txt")'"
expect_fail 1 '^dkb sql: error: not translatable to TensorPlan: function regexp_matches\(\) \(line 1, column 33\)$' -- \
    "$DKB" sql --data "$WORK/sf0.01" -f "$CORPUS/unsupported_regexp.sql"
expect_fail 1 '^dkb sql: error: More than one row returned by a subquery' -- \
    "$DKB" sql --data "$WORK/sf0.01" -e 'SELECT (SELECT n_nationkey FROM nation) AS k'
expect_fail 1 '^dkb sql: error: not translatable to TensorPlan: operator (CREATE_TABLE|CREATE|DROP)' -- \
    "$DKB" sql --data "$WORK/sf0.01" -e 'DROP TABLE lineitem'
pass "refused constructs are one line naming the operator or function (exit 1)"
