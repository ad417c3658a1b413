# official_sf1.sh: the 22 TPC-H baseline plans at SF 1, seed 0 (the
# qualification parameters) give the official TPC-H answers
# (answers/qN.out, numbers rounded to 2 decimals), checked with
# `dkb run --expect-official`.
# Environment: DKB_SF1_STORE, an SF 1 store (default: the test generates one,
# about 1 GB, in its work folder); DKB_TPCH_ANSWERS, the folder of
# q1.out..q22.out (default: the copy in tests/data/official-sf1, taken from
# the dbgen 2.14 repository's answers/). When either is given but absent the
# test prints why and exits 77, CTest's skip code for this test.
source "$(dirname "$0")/lib/common.bash"

SKIP=77
STORE=${DKB_SF1_STORE:-}
OFFICIAL=${DKB_TPCH_ANSWERS:-$DKB_TESTDATA/official-sf1}
skip() { echo "SKIPPED: $*"; exit "$SKIP"; }

if [ -z "$STORE" ]; then
    STORE="$WORK/sf1"
    "$DKB" gen --sf 1 --out "$STORE" -q
fi
[ -d "$STORE" ] || skip "DKB_SF1_STORE=$STORE is not a directory"
[ -d "$OFFICIAL" ] || skip "official answers folder $OFFICIAL is absent (set DKB_TPCH_ANSWERS)"
# A store of another scale factor is a setup error, not a reason to skip.
sf=$("$DKB" info "$STORE" --format json 2>/dev/null | sed -n 's/.*"scale_factor": *\([0-9.e+-]*\).*/\1/p' | head -1) ||
    fail "dkb info $STORE failed: not a store?"
[ -n "$sf" ] || fail "dkb info $STORE printed no scale factor: not a store?"
awk -v s="$sf" 'BEGIN { exit !(s == 1) }' || fail "DKB_SF1_STORE=$STORE is SF $sf, not SF 1"

total=0 passed=0
failures=()
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    total=$((total + 1))
    [ -f "$OFFICIAL/q$n.out" ] || { failures+=("$q: $OFFICIAL/q$n.out missing"); continue; }
    rc=0
    out=$("$DKB" run "$q" --data "$STORE" --seed 0 --expect-official "$OFFICIAL/q$n.out" 2>&1 >/dev/null) || rc=$?
    if [ "$rc" = 0 ]; then
        passed=$((passed + 1))
    else
        failures+=("$q: dkb run $q --seed 0 at SF 1 exited $rc: $(printf '%s' "$out" | head -3 | tr '\n' ' ')")
    fi
done
for m in "${failures[@]}"; do echo "FAIL: $m" >&2; done
echo "official SF 1: $passed of $total queries match the official answers, ${#failures[@]} failed"
[ "${#failures[@]}" = 0 ] || fail "${#failures[@]} of $total queries differ from the official SF 1 answers"
pass "all $total queries match the official SF 1 answers"
