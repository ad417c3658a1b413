# sql_tpch.sh: the 22 TPC-H queries through the SQL translator (dkb sql
# --data STORE -f qNN.sql: DuckDB's optimized plan run as TensorPlan on the
# CPU) give the answers of the hand-written plans (`dkb run qNN --format
# csv`), of the committed DuckDB goldens (tests/answers/sf<SF>/qNN-s<S>.csv)
# and, for seed 0, of DuckDB itself on the same SQL (--check), at SF 0.01
# and SF 0.1 for seeds 0..5. Every comparison goes through
# dkb_result_compare (exact decimals, the ORDER BY checked, ties as sets);
# a deliberately altered answer must be reported as a mismatch; `--time N
# --hand` prints both medians and the ratio (and its usage errors).
# libduckdb comes from tools/install-deps.sh: when it cannot be found this
# test FAILS, unless DKB_ALLOW_NO_DUCKDB=1, where it exits 77.
# DKB_SQL_BACKEND=cuda runs the translated programs and the hand plans on
# the CUDA backend (sql_tpch_cuda.sh); without a GPU that exits 77.
source "$(dirname "$0")/lib/common.bash"
BACKEND=${DKB_SQL_BACKEND:-cpu}

ANSWERS=$(cd "$(dirname "$0")/../answers" 2>/dev/null && pwd) || fail "tests/answers is missing"
SFS="0.01 0.1"
SEEDS="${DKB_SQL_SEEDS:-0 1 2 3 4 5}"

for sf in $SFS; do
    "$DKB" gen --sf "$sf" --out "$WORK/sf$sf" -q || fail "dkb gen --sf $sf failed"
done

need_duckdb "$WORK/sf0.01" 'SELECT 1 AS one'
pass "libduckdb loads and SELECT 1 runs through the translator"
if [ "$BACKEND" != cpu ]; then
    probe=$("$DKB" sql --data "$WORK/sf0.01" --backend "$BACKEND" -e 'SELECT 1 AS one' 2>&1) || {
        case $probe in
        *"--backend $BACKEND:"*) echo "skip: $probe"; exit 77 ;;
        *) fail "dkb sql --backend $BACKEND -e 'SELECT 1 AS one': $probe" ;;
        esac
    }
    pass "the $BACKEND backend runs SELECT 1 through the translator"
fi

total=0 passed=0
failures=()
for sf in $SFS; do
    S="$WORK/sf$sf"
    for s in $SEEDS; do
        # the 22 as qNN-sS.sql, the hand plans' answers as hand/qNN-sS.csv,
        # checked in one dkb sql run against hand/ and the goldens' directory
        D="$WORK/sf$sf-s$s"
        mkdir -p "$D/hand"
        files=()
        for n in $(seq 1 22); do
            q=$(printf 'q%02d' "$n")
            "$DKB" sql "$q" --seed "$s" --sf "$sf" >"$D/$q-s$s.sql" || fail "dkb sql $q --seed $s failed"
            "$DKB" run "$q" --data "$S" --seed "$s" --backend "$BACKEND" --format csv >"$D/hand/$q-s$s.csv" 2>"$WORK/run.err" ||
                fail "dkb run $q --seed $s at SF $sf failed: $(head -1 "$WORK/run.err")"
            [ -f "$ANSWERS/sf$sf/$q-s$s.csv" ] || fail "golden $ANSWERS/sf$sf/$q-s$s.csv missing"
            files+=(-f "$D/$q-s$s.sql")
        done
        check=()
        [ "$s" = 0 ] && check=(--check)
        rc=0
        "$DKB" sql --data "$S" --backend "$BACKEND" "${files[@]}" --expect-dir "$D/hand" --expect-dir "$ANSWERS/sf$sf" "${check[@]}" \
            2>"$D/out.txt" || rc=$?
        want=2
        [ "$s" = 0 ] && want=3
        for n in $(seq 1 22); do
            q=$(printf 'q%02d' "$n")
            total=$((total + 1))
            nok=$(grep -c "^dkb sql: $D/$q-s$s.sql: .*: ok, " "$D/out.txt" || true)
            if [ "$nok" = "$want" ]; then
                passed=$((passed + 1))
            else
                failures+=("$q seed $s SF $sf: $(grep -F "$q-s$s.sql" "$D/out.txt" | grep -v ': ok, ' | tr '\n' ' ' | cut -c1-400)")
            fi
        done
        [ "$rc" = 0 ] || [ "${#failures[@]}" -gt 0 ] || fail "dkb sql exited $rc with every query ok: $(tail -3 "$D/out.txt")"
    done
done
for m in "${failures[@]}"; do echo "FAIL: $m" >&2; done
echo "sql_tpch ($BACKEND): $passed of $total translated queries match the hand plans and the DuckDB goldens (SF ${SFS// /, SF }; seeds ${SEEDS// /,}; seed 0 also against DuckDB itself)"
[ "${#failures[@]}" = 0 ] || fail "${#failures[@]} of $total translated TPC-H answers differ or failed"
pass "all $total translated answers match"

# the comparison is real: an altered answer is a mismatch
"$DKB" sql q06 >"$WORK/q06.sql"
"$DKB" run q06 --data "$WORK/sf0.01" --format csv >"$WORK/q06.csv"
sed '2s/\.\([0-9]\)/.9\1/' "$WORK/q06.csv" >"$WORK/q06-bad.csv"
rc=0
out=$("$DKB" sql --data "$WORK/sf0.01" -f "$WORK/q06.sql" --expect "$WORK/q06-bad.csv" 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q 'mismatch: row 1, column revenue' <<<"$out" || fail "an altered Q6 answer was not reported: exit $rc: $out"
pass "an altered answer is reported: $out"

# the result prints like dkb run's (same columns and values)
"$DKB" sql --data "$WORK/sf0.01" -f "$WORK/q06.sql" --format csv >"$WORK/q06-sql.csv" || fail "dkb sql --format csv failed"
cmp -s "$WORK/q06-sql.csv" "$WORK/q06.csv" || fail "dkb sql --format csv differs from dkb run's: $(diff "$WORK/q06-sql.csv" "$WORK/q06.csv")"
pass "dkb sql --format csv prints Q6 exactly as dkb run does"

# --time N --hand: the translated program and the hand plan, interleaved
"$DKB" sql q17 >"$WORK/q17.sql"
out=$("$DKB" sql --data "$WORK/sf0.01" --backend "$BACKEND" --time 2 --hand -f "$WORK/q06.sql" -f "$WORK/q17.sql" 2>&1 >/dev/null) \
    || fail "dkb sql --time 2 --hand exit $?: $out"
for q in q06 q17; do
    grep -Eq "$q.sql: time: translated program median [0-9.]+ ms, min .*\(2 runs after 1 warm-up; $BACKEND\)" <<<"$out" \
        || fail "no translated time line for $q: $out"
    grep -Eq "$q.sql: time: hand plan $q median [0-9.]+ ms, min [0-9.]+, max [0-9.]+; translated/hand [0-9.]+x" <<<"$out" \
        || fail "no hand plan time line for $q: $out"
done
pass "dkb sql --time 2 --hand: both medians and their ratio, Q6 and Q17"
expect_fail 2 "--hand goes with --time N" -- "$DKB" sql --data "$WORK/sf0.01" -f "$WORK/q06.sql" --hand
cp "$WORK/q06.sql" "$WORK/revenue.sql"
expect_fail 1 "--hand: .*revenue.sql: the file's name is no TPC-H query's" -- \
    "$DKB" sql --data "$WORK/sf0.01" -f "$WORK/revenue.sql" --time 1 --hand
