# partitions.sh: `dkb run --mem-budget` (docs/partitions.md). At SF 0.1
# with 8 partitions per table, every query runs under a budget of its
# resident tables plus two of its largest partition (read from the
# too-small-budget error, which must name the query and what it needs), so
# at least 4 runs of partitions per pass, and plus one (8 runs, one
# partition each); for seeds 0..5 its --format csv
# output must be byte-identical to the unpartitioned run's and match the
# golden answer (tests/answers/sf0.1, as golden.sh checks). Also: a budget
# that fits changes nothing, a store of one partition is refused in one
# line, and bad sizes are usage errors. Any difference fails the test.
source "$(dirname "$0")/lib/common.bash"

ANSWERS=$(cd "$(dirname "$0")/../answers/sf0.1" 2>/dev/null && pwd) || fail "tests/answers/sf0.1 is missing"
SEEDS="0 1 2 3 4 5"
D="$WORK/sf0.1p8"
"$DKB" gen --sf 0.1 --partitions 8 --out "$D" -q || fail "dkb gen --sf 0.1 --partitions 8 failed"
"$DKB" gen --sf 0.01 --out "$WORK/sf0.01" -q || fail "dkb gen --sf 0.01 failed"
pass "stores at SF 0.1 (8 partitions) and SF 0.01 (1 partition)"

# bad sizes: usage errors
for bad in 0 -5 12X 1.5G M ""; do
    expect_fail 2 "mem-budget" -- "$DKB" run q06 --data "$D" --mem-budget "$bad"
done

# one partition: refused, naming the query and the remedy
expect_fail 1 "^dkb run: error: q01: not partitioned: .*one partition of lineitem .*--partitions" -- \
    "$DKB" run q01 --data "$WORK/sf0.01" --mem-budget 100K

failures=()
checked=0
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    # too small: exit 1, one line naming the query and what it needs
    rc=0
    err=$("$DKB" run "$q" --data "$D" --mem-budget 1 2>&1 >/dev/null) || rc=$?
    [ "$rc" = 1 ] || { failures+=("$q: --mem-budget 1 exited $rc, expected 1: $err"); continue; }
    [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { failures+=("$q: --mem-budget 1 printed more than one line: $err"); continue; }
    re="^dkb run: error: $q: --mem-budget 1 bytes is too small: it needs at least [0-9.]+[KMG]? \(([0-9]+) bytes: resident tables ([0-9]+) \+ the largest partition of [a-z]+( and [a-z]+)? ([0-9]+)\)"
    [[ $err =~ $re ]] || { failures+=("$q: unexpected too-small message: $err"); continue; }
    need=${BASH_REMATCH[1]} resident=${BASH_REMATCH[2]} largest=${BASH_REMATCH[4]}
    [ "$need" = $((resident + largest)) ] || { failures+=("$q: needs $need != $resident + $largest"); continue; }

    # a budget that fits: exactly the plain run, no partitioning
    plain=$("$DKB" run "$q" --data "$D" --format csv) || { failures+=("$q: plain run failed"); continue; }
    fit=$("$DKB" run "$q" --data "$D" --format csv --mem-budget 64G 2>"$WORK/fit.err") ||
        { failures+=("$q: --mem-budget 64G failed: $(head -1 "$WORK/fit.err")"); continue; }
    [ "$fit" = "$plain" ] || failures+=("$q: --mem-budget 64G output differs from the plain run")
    ! grep -q partitioned "$WORK/fit.err" || failures+=("$q: --mem-budget 64G ran partitioned")

    # two budgets: two of the largest partitions (at least 4 runs of
    # partitions), and one (every partition a run of its own: 8 runs)
    for per in 2 1; do
        budget=$((resident + per * largest))
        for s in $SEEDS; do
            golden="$ANSWERS/$q-s$s.csv"
            [ -f "$golden" ] || { failures+=("$q seed $s: $golden missing"); continue; }
            checked=$((checked + 1))
            base=$("$DKB" run "$q" --data "$D" --seed "$s" --format csv) ||
                { failures+=("$q seed $s: unpartitioned run failed"); continue; }
            rc=0
            part=$("$DKB" run "$q" --data "$D" --seed "$s" --format csv --mem-budget "$budget" --expect "$golden" \
                2>"$WORK/part.err") || rc=$?
            [ "$rc" = 0 ] ||
                { failures+=("$q seed $s: --mem-budget $budget exited $rc: $(grep -v partitioned "$WORK/part.err" | head -2 | tr '\n' ' ')"); continue; }
            runs=$(sed -n "s/^dkb run: $q partitioned: 8 partitions in \([0-9]*\) runs per pass.*/\1/p" "$WORK/part.err")
            { [ -n "$runs" ] && [ "$runs" -ge $((8 / (2 * per))) ] && { [ "$per" = 2 ] || [ "$runs" = 8 ]; }; } ||
                { failures+=("$q seed $s: --mem-budget $budget ran in ${runs:-no} runs of partitions: $(head -1 "$WORK/part.err")"); continue; }
            [ "$part" = "$base" ] ||
                { failures+=("$q seed $s: partitioned output ($runs runs) differs from the unpartitioned run"); continue; }
        done
        pass "$q: budget $budget bytes (resident $resident + $per x $largest), $runs runs of partitions, seeds ${SEEDS// /,}"
    done
done

for m in "${failures[@]}"; do echo "FAIL: $m" >&2; done
[ "$checked" = 264 ] || fail "checked $checked answers, expected 264 (22 queries x 6 seeds x 2 budgets)"
[ "${#failures[@]}" = 0 ] || fail "${#failures[@]} partitioned checks failed"
pass "all 22 queries x 6 seeds x 2 budgets partitioned: byte-identical to the unpartitioned runs and equal to the goldens"
