# sql_explain.sh: `dkb sql --data STORE --explain`: DuckDB's optimized logical
# plan (libduckdb loaded at run time) of the 22 TPC-H queries at SF 0.01, each
# with the root operator its ORDER BY/LIMIT gives and only the store's tables
# under it; DuckDB's errors (a syntax error with its line and a caret, a
# missing table or column in one line); a bad store and a missing libduckdb
# as one-line errors; without --explain the SQL runs (the translator); --help
# shows both forms; `dkb sql QUERY` still prints the TPC-H text.
# libduckdb comes from tools/install-deps.sh (CI runs it): when it cannot be
# found this test FAILS, unless DKB_ALLOW_NO_DUCKDB=1, where it exits 77.
source "$(dirname "$0")/lib/common.bash"

"$DKB" gen --sf 0.01 --out "$WORK/sf0.01" -q || fail "dkb gen --sf 0.01 failed"
S="$WORK/sf0.01"

# libduckdb present?
need_duckdb "$S"
pass "libduckdb loads: SELECT 1 plans as $(echo "$probe" | head -1)"

# --help documents both forms
help=$("$DKB" sql --help) || fail "dkb sql --help failed"
for want in "usage: dkb sql QUERY" "dkb sql --data STORE (-e SQL | -f FILE) --explain" "DKB_LIBDUCKDB" "translator"; do
    grep -qF -- "$want" <<<"$help" || fail "dkb sql --help lacks '$want'"
done
pass "--help shows dkb sql QUERY and --data ... --explain"

# dkb sql QUERY unchanged: the TPC-H text
"$DKB" sql q06 | grep -q "sum(l_extendedprice \* l_discount) as revenue" || fail "dkb sql q06 no longer prints Q6's SQL"
pass "dkb sql q06 prints the TPC-H text"

# The 22 queries: plan JSON, root operator, tables, tree
declare -A ROOT=(
    [q01]=ORDER_BY [q02]=TOP_N [q03]=TOP_N [q04]=ORDER_BY [q05]=ORDER_BY [q06]=PROJECTION
    [q07]=ORDER_BY [q08]=ORDER_BY [q09]=ORDER_BY [q10]=TOP_N [q11]=ORDER_BY [q12]=ORDER_BY
    [q13]=ORDER_BY [q14]=PROJECTION [q15]=MATERIALIZED_CTE [q16]=ORDER_BY [q17]=PROJECTION [q18]=TOP_N
    [q19]=PROJECTION [q20]=ORDER_BY [q21]=TOP_N [q22]=ORDER_BY)
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    "$DKB" sql "$q" --sf 0.01 >"$WORK/$q.sql" || fail "dkb sql $q failed"
    "$DKB" sql --data "$S" -f "$WORK/$q.sql" --explain=json >"$WORK/$q.json" 2>"$WORK/$q.err" ||
        fail "$q: $(cat "$WORK/$q.err")"
    "$DKB" sql --data "$S" -f "$WORK/$q.sql" --explain=tree >"$WORK/$q.tree" 2>"$WORK/$q.err" ||
        fail "$q tree: $(cat "$WORK/$q.err")"
    head -1 "$WORK/$q.tree" | grep -q "^${ROOT[$q]}" || fail "$q: tree starts '$(head -1 "$WORK/$q.tree")', expected ${ROOT[$q]}"
done
python3 - "$WORK" <<'PY' || fail "the plan JSON of the 22 queries"
import json, re, sys
work = sys.argv[1]
ROOT = dict(q01='ORDER_BY', q02='TOP_N', q03='TOP_N', q04='ORDER_BY', q05='ORDER_BY', q06='PROJECTION',
            q07='ORDER_BY', q08='ORDER_BY', q09='ORDER_BY', q10='TOP_N', q11='ORDER_BY', q12='ORDER_BY',
            q13='ORDER_BY', q14='PROJECTION', q15='MATERIALIZED_CTE', q16='ORDER_BY', q17='PROJECTION',
            q18='TOP_N', q19='PROJECTION', q20='ORDER_BY', q21='TOP_N', q22='ORDER_BY')
TABLES = {'part', 'supplier', 'partsupp', 'customer', 'orders', 'lineitem', 'nation', 'region'}
seen, joins, bad = set(), set(), []
def walk(op, q, tables):
    seen.add(op['type'])
    if 'join_type' in op: joins.add(op['join_type'])
    if op['type'] == 'LOGICAL_GET': tables.add(op['function_data']['table'])
    for c in op['children']: walk(c, q, tables)
for n in range(1, 23):
    q = 'q%02d' % n
    text = open(f'{work}/{q}.json').read()
    doc = json.loads(text)
    if doc.get('error') is not False or len(doc.get('plans', [])) != 1:
        bad.append(f'{q}: not one plan: {text[:200]}'); continue
    root = doc['plans'][0]
    if root['type'] != 'LOGICAL_' + ROOT[q]: bad.append(f"{q}: root {root['type']}, expected LOGICAL_{ROOT[q]}")
    tables = set()
    walk(root, q, tables)
    sql = open(f'{work}/{q}.sql').read()
    named = {t for t in TABLES if re.search(r'\b' + t + r'\b', sql)}
    if not tables or tables - named: bad.append(f'{q}: scans {sorted(tables)}, the SQL names {sorted(named)}')
    # the indenter keeps DuckDB's numbers byte for byte (the unset-index sentinel)
    if '18446744073709551615' not in text: bad.append(f'{q}: the uint64 sentinel did not survive the indenter')
want = {'LOGICAL_GET', 'LOGICAL_FILTER', 'LOGICAL_PROJECTION', 'LOGICAL_AGGREGATE_AND_GROUP_BY',
        'LOGICAL_COMPARISON_JOIN', 'LOGICAL_DELIM_JOIN', 'LOGICAL_DELIM_GET', 'LOGICAL_MATERIALIZED_CTE',
        'LOGICAL_CTE_REF', 'LOGICAL_CHUNK_GET', 'LOGICAL_ORDER_BY', 'LOGICAL_TOP_N'}
if want - seen: bad.append(f'operators never seen: {sorted(want - seen)}')
if {'INNER', 'MARK', 'ANTI'} - joins: bad.append(f'join types seen: {sorted(joins)}')
for b in bad: print('FAIL:', b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
pass "22/22 TPC-H queries plan at SF 0.01: root operators as expected, tables as in the SQL, the issue's operator types all present"
grep -q "GET lineitem #[0-9]* \[l_shipdate, l_returnflag, l_linestatus, l_quantity, l_extendedprice, l_discount, l_tax\].*filters: l_shipdate<=DATE '1998-09-02'" "$WORK/q01.tree" ||
    fail "q01 tree: no GET lineitem line with the shipdate filter: $(grep GET "$WORK/q01.tree")"
grep -q "AGGREGATE_AND_GROUP_BY #[0-9]* groups #[0-9]*: #0, #1 aggregates: sum.*avg(.*count_star()" "$WORK/q01.tree" || fail "q01 tree: no aggregate line"
pass "q01's tree: GET with its columns and table filter, the aggregate"

# both at once (default): headers, tree, JSON
out=$("$DKB" sql --data "$S" --explain -e 'SELECT n_name FROM nation ORDER BY n_name') || fail "--explain (both) failed"
grep -q "^-- DuckDB v[0-9.]*, optimized logical plan" <<<"$out" || fail "--explain: no DuckDB version header: $out"
grep -q '^    GET nation #0 \[n_name\]' <<<"$out" || fail "--explain: no tree: $out"
grep -q '^  "error": false,' <<<"$out" || fail "--explain: no JSON: $out"
pass "--explain prints the tree and the JSON"

# statistics: the store's data is loaded (a filter no row passes folds to an empty result)
"$DKB" sql --data "$S" --explain=tree -e 'SELECT * FROM lineitem WHERE l_quantity > 51' | grep -q '^EMPTY_RESULT' ||
    fail "l_quantity > 51 does not fold to EMPTY_RESULT: DuckDB did not see the store's statistics"
"$DKB" sql --data "$S" --explain=tree -e 'SELECT * FROM lineitem WHERE l_quantity > 49' | grep -q 'GET lineitem' ||
    fail "l_quantity > 49 does not scan lineitem"
pass "DuckDB plans against the store's statistics (l_quantity > 51 folds, > 49 scans)"

# a syntax error: DuckDB's message, line and caret
printf 'SELECT l_orderkey,\n       sum(l_quantity frm lineitem\n' >"$WORK/syntax.sql"
rc=0
err=$("$DKB" sql --data "$S" -f "$WORK/syntax.sql" --explain 2>&1 >/dev/null) || rc=$?
[ "$rc" = 1 ] || fail "syntax error: exit $rc, expected 1: $err"
[ "$(sed -n 1p <<<"$err")" = 'dkb sql: error: parser error: syntax error at or near "frm" (line 2, column 23)' ] ||
    fail "syntax error: first line '$(sed -n 1p <<<"$err")'"
[ "$(sed -n 2p <<<"$err")" = '         sum(l_quantity frm lineitem' ] || fail "syntax error: second line '$(sed -n 2p <<<"$err")'"
[ "$(sed -n 3p <<<"$err")" = "$(printf '%24s^' '')" ] || fail "syntax error: caret line '$(sed -n 3p <<<"$err")'"
pass "syntax error: $(sed -n 1p <<<"$err") + line + caret"

expect_fail 1 '^dkb sql: error: catalog error: Table with name nosuch does not exist!.*\(line 1, column 15\)$' -- \
    "$DKB" sql --data "$S" --explain -e 'SELECT * FROM nosuch'
expect_fail 1 '^dkb sql: error: binder error: Referenced column "zz" not found' -- \
    "$DKB" sql --data "$S" --explain -e 'SELECT zz FROM lineitem'
expect_fail 1 'the SQL holds 2 statements; give one' -- "$DKB" sql --data "$S" --explain -e 'SELECT 1; SELECT 2'
expect_fail 1 'the SQL holds no statement' -- "$DKB" sql --data "$S" --explain -e ' '
expect_fail 1 "^dkb sql: error: $WORK/nope/manifest.json: " -- "$DKB" sql --data "$WORK/nope" --explain -e 'SELECT 1'
expect_fail 1 "^dkb sql: error: .*nope.sql" -- "$DKB" sql --data "$S" --explain -f "$WORK/nope.sql"
expect_fail 1 '^dkb sql: error: libduckdb not found: DKB_LIBDUCKDB=/nonexistent/libduckdb.so' -- \
    env DKB_LIBDUCKDB=/nonexistent/libduckdb.so "$DKB" sql --data "$S" --explain -e 'SELECT 1'
expect_fail 1 '^dkb sql: error: libduckdb .*/manifest.json does not load' -- \
    env DKB_LIBDUCKDB="$S/manifest.json" "$DKB" sql --data "$S" --explain -e 'SELECT 1'
out=$("$DKB" sql --data "$S" -e 'SELECT 1 AS one' --format csv) || fail "running SELECT 1 (the translator) failed"
[ "$out" = "$(printf 'one\n1')" ] || fail "SELECT 1 AS one through the translator printed '$out'"
pass "without --explain the SQL runs through the translator (sql_tpch.sh checks the answers)"
expect_fail 2 'need --data STORE' -- "$DKB" sql --explain -e 'SELECT 1'
expect_fail 2 'needs the SQL' -- "$DKB" sql --data "$S" --explain
expect_fail 2 'give the SQL once' -- "$DKB" sql --data "$S" --explain -e 'SELECT 1' -f x.sql
expect_fail 2 'go with QUERY, not --data' -- "$DKB" sql --data "$S" --explain -e 'SELECT 1' --sf 3
# --seed/--param with --data set the SQL's declared parameters (cli.sql_task); without any: refused
expect_fail 2 '\-e declares no parameters' -- "$DKB" sql --data "$S" --explain -e 'SELECT 1' --seed 3
expect_fail 2 'expected tree, json or both' -- "$DKB" sql --data "$S" --explain=dot -e 'SELECT 1'
expect_fail 2 "unexpected argument 'q01'" -- "$DKB" sql q01 --data "$S" --explain -e 'SELECT 1'
