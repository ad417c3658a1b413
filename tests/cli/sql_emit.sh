# sql_emit.sh: `dkb sql --data STORE -f FILE --emit c [-o OUT.c]`: the
# translated program as C source in the shape of src/queries/qNN.c. For the
# 22 TPC-H queries (the text of `dkb sql qNN`, seed 0) and a set of corpus
# queries at SF 0.01: the file is emitted (-o, and to standard output: the
# same text), compiled with the project's warning flags (-Werror) against
# include/ and src/, linked with a small driver against the build's
# libdkb_core.a (prepare, core, finish on the CPU backend), run, and its CSV
# compared byte for byte with `dkb sql --format csv` of the same SQL. Then
# the one-line errors: --emit with another language, -o into a missing
# directory (nothing left behind), -o without --emit, --emit with --explain,
# a query the translator refuses. When the build's link line cannot be
# found (not a Makefile build), the files are only compiled (-fsyntax-only)
# and the test says so.
# libduckdb comes from tools/install-deps.sh: when it cannot be found this
# test FAILS, unless DKB_ALLOW_NO_DUCKDB=1, where it exits 77.
source "$(dirname "$0")/lib/common.bash"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$(dirname "$DKB")" && pwd)
CC=${CC:-gcc}
CFLAGS=(-std=c11 -D_GNU_SOURCE -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror -I"$SRC/include" -I"$SRC/src")

"$DKB" gen --sf 0.01 --out "$WORK/sf0.01" -q || fail "dkb gen --sf 0.01 failed"
S="$WORK/sf0.01"

need_duckdb "$S"

# The driver: run the emitted query's prepare, core and finish over STORE on
# the CPU backend and print the result as CSV (as `dkb sql --format csv`).
cat >"$WORK/driver.c" <<'C'
#include <stdio.h>

#include "dkb/query.h"

extern const dkb_query dkb__sql_emitted;

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    const dkb_query *q = &dkb__sql_emitted;
    dkb_store *s = NULL;
    dkb_tp *tp = NULL;
    dkb_error err = {0};
    if (dkb_store_open(argv[1], 0, &s, &err) || dkb_tp_create(DKB_TP_CPU, 1, &tp, &err)) {
        fprintf(stderr, "driver: %s\n", err.msg);
        return 1;
    }
    static dkb_tensor_set in, out;
    static dkb_params p;
    dkb_result res = {0};
    int rc = q->prepare(tp, s, &p, &in);
    if (!rc) rc = q->core(tp, &in, &out);
    if (!rc) rc = q->finish(tp, &out, &p, &res);
    if (rc) {
        dkb_tp_status(tp, &err);
        fprintf(stderr, "driver: %s: %s\n", q->name, err.msg[0] ? err.msg : dkb_strerror(rc));
        return 1;
    }
    rc = dkb_result_print(&res, DKB_RES_FMT_CSV, stdout);
    dkb_result_free(&res);
    dkb_tp_destroy(tp);
    dkb_store_close(s);
    return rc ? 1 : 0;
}
C
"$CC" "${CFLAGS[@]}" -c "$WORK/driver.c" -o "$WORK/driver.o" || fail "the driver does not compile"

# Link as the dkb binary is linked (its link line, our objects instead of its own).
LINK=
if [ -f "$BUILD/CMakeFiles/dkb.dir/link.txt" ] && [ -f "$BUILD/CMakeFiles/dkb.dir/linkLibs.rsp" ] &&
    [ -f "$BUILD/libdkb_core.a" ]; then
    LINK=$(head -1 "$BUILD/CMakeFiles/dkb.dir/link.txt")
fi
link_run() { # OBJ EXE
    [ -n "$LINK" ] || return 0
    local cmd=${LINK/@CMakeFiles\/dkb.dir\/objects1/$WORK/driver.o $1}
    cmd=${cmd/ -o dkb / -o $2 }
    (cd "$BUILD" && eval "$cmd") || fail "linking $1: $cmd"
}

nran=0
emit_check() { # NAME SQLFILE
    local name=$1 sql=$2 c="$WORK/$1.c"
    "$DKB" sql --data "$S" -f "$sql" --emit c -o "$c" 2>"$WORK/$name.err" || fail "$name: --emit c: $(cat "$WORK/$name.err")"
    [ -s "$c" ] || fail "$name: -o $c is empty"
    ls "$WORK" | grep -q "$name.c.tmp" && fail "$name: a temporary file was left behind"
    grep -q "^static int prepare(" "$c" && grep -q "^static int core(" "$c" && grep -q "^static int finish(" "$c" ||
        fail "$name: no prepare/core/finish in $c"
    grep -q "^const dkb_query dkb__sql_emitted = {" "$c" || fail "$name: no dkb_query in $c"
    "$CC" "${CFLAGS[@]}" -c "$c" -o "$WORK/$name.o" 2>"$WORK/$name.cc" || fail "$name: $c does not compile: $(head -20 "$WORK/$name.cc")"
    if [ -n "$LINK" ]; then
        link_run "$WORK/$name.o" "$WORK/$name.exe"
        "$WORK/$name.exe" "$S" >"$WORK/$name.got" 2>"$WORK/$name.err" || fail "$name: the emitted program failed: $(cat "$WORK/$name.err")"
        "$DKB" sql --data "$S" -f "$sql" --format csv >"$WORK/$name.want" 2>"$WORK/$name.err" || fail "$name: dkb sql: $(cat "$WORK/$name.err")"
        cmp -s "$WORK/$name.got" "$WORK/$name.want" ||
            fail "$name: the emitted program's result differs from dkb sql's: $(diff "$WORK/$name.got" "$WORK/$name.want" | head -5)"
        nran=$((nran + 1))
    fi
}

for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    "$DKB" sql "$q" --sf 0.01 >"$WORK/$q.sql" || fail "dkb sql $q failed"
    emit_check "$q" "$WORK/$q.sql"
done
pass "22 TPC-H queries: emitted, compiled with -Werror$([ -n "$LINK" ] && echo ", linked, run and equal to dkb sql")"

# One or more of each kind: aggregates, NULLs and outer joins, semi/anti/mark
# joins, subqueries, CASE, decimals, dates, strings (dictionary and free
# text), set operations, ORDER BY/LIMIT, constant tables.
CORPUS=(agg_count_distinct agg_count_distinct_string agg_empty_global agg_group_free_text agg_having
        agg_min_max_strings agg_sum_distinct anti_not_exists anti_not_in_subquery case_no_else
        case_strings_free_text correlated_two_levels cross_join_scalar cte_twice date_extract
        date_interval_month dec_divide dec_round division_by_zero_null filter_is_null ilike_free_text
        join_free_text_key join_nonequi join_two_keys like_escape mark_in_or null_not_in_with_null
        order_limit_offset order_nulls_first outer_full outer_left_case_on_null outer_right
        scalar_uncorrelated semi_exists_residual set_except set_union_distinct str_concat_free
        str_replace str_substring_dict union_different_dicts values_list variant_q18_large)
ncorpus=0
for name in "${CORPUS[@]}"; do
    f="$SRC/tests/sql/corpus/$name.sql"
    [ -f "$f" ] || fail "corpus query $f missing"
    emit_check "c_$name" "$f"
    ncorpus=$((ncorpus + 1))
done
pass "$ncorpus corpus queries: emitted, compiled$([ -n "$LINK" ] && echo ", run and equal to dkb sql")"
if [ -n "$LINK" ]; then
    pass "$nran emitted programs built and run against libdkb_core.a on SF 0.01"
else
    echo "note: no Makefile link line under $BUILD: the emitted files were compiled only, not linked or run"
fi

# Standard output gives the same text as -o (the name aside: -o's stem, or the -f file's).
"$DKB" sql --data "$S" -f "$WORK/q06.sql" --emit c >"$WORK/stdout.c" || fail "--emit c to standard output"
cmp -s "$WORK/stdout.c" "$WORK/q06.c" || fail "--emit c to standard output differs from -o: $(diff "$WORK/stdout.c" "$WORK/q06.c" | head -5)"
grep -q "select" "$WORK/stdout.c" && grep -q "dkb_tp_reduce(tp, DKB_AGG_SUM" "$WORK/stdout.c" || fail "q06's C lacks its SQL or its sum"
"$DKB" sql --data "$S" -e 'SELECT 1 AS one' --emit c | grep -q '.name = "sql"' || fail "-e: the query is not named sql"
pass "--emit c to standard output: the same file; -e names the query sql"

# One-line errors
expect_fail 2 "--emit cuda: expected c" -- "$DKB" sql --data "$S" -e 'SELECT 1' --emit cuda
expect_fail 1 "-o $WORK/nodir/x.c: cannot write" -- "$DKB" sql --data "$S" -e 'SELECT 1' --emit c -o "$WORK/nodir/x.c"
[ ! -e "$WORK/nodir" ] || fail "-o into a missing directory made it"
expect_fail 2 "-o goes with --emit c" -- "$DKB" sql --data "$S" -e 'SELECT 1' -o "$WORK/x.c"
expect_fail 2 "not with --explain" -- "$DKB" sql --data "$S" -e 'SELECT 1' --emit c --explain=tree
expect_fail 2 "one SQL" -- "$DKB" sql --data "$S" -f "$WORK/q01.sql" -f "$WORK/q06.sql" --emit c
expect_fail 1 "not translatable to TensorPlan" -- "$DKB" sql --data "$S" --emit c -o "$WORK/refused.c" \
    -e "SELECT regexp_matches(c_name, 'Customer#0+1') FROM customer"
[ ! -e "$WORK/refused.c" ] || fail "a refused query left $WORK/refused.c"
ls "$WORK" | grep -q '\.tmp\.' && fail "a temporary file was left behind"
rc=0
out=$("$DKB" sql --data "$S" -e 'SELEC 1' --emit c 2>&1 >"$WORK/syntax.c") || rc=$?
[ "$rc" = 1 ] && head -1 <<<"$out" | grep -q "^dkb sql: error: parser error: syntax error" && [ ! -s "$WORK/syntax.c" ] ||
    fail "--emit c of a syntax error: exit $rc: $out"
pass "--emit c of a syntax error: DuckDB's line and caret, exit 1, nothing written"
pass "--emit c: one-line errors"
