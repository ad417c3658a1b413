# partitions_cuda.sh: CUDA streaming of partitions (docs/partitions.md,
# "CUDA streaming"; issue 15) on a GPU: exits 77 (CTest: skipped) without
# one. Passes on the H200 (bench/device_check.sh tests).
#   1. tests/cli/partitions.sh --backend cuda: SF 0.1 with 8 partitions,
#      the 22 queries x seeds 0..5 under resident + 2 and + 1 x the largest
#      partition (from the too-small error, which counts the slots' aligned
#      pieces on CUDA): byte-identical to the unpartitioned CUDA run and
#      equal to the goldens (264 answers);
#   2. per query, seed 0, both budgets: the "streamed:" line says the runs
#      went through 2 device buffers (+2) or 1 (+1), as many loads as runs
#      x passes (runs when every run has a buffer of its own), at least the
#      streamed columns' bytes, and a measured pinned H2D bandwidth; the
#      csv equals the golden;
#   3. --mem-budget auto (the free device memory) changes nothing for a
#      query that fits; on the CPU backend it is a usage error; --time under
#      a budget makes only the resident tables resident before timing.
# Env: DKB_PARTITIONS_JOBS (queries at once in 1; default 4).
source "$(dirname "$0")/lib/common.bash"

ANSWERS=$(cd "$(dirname "$0")/../answers/sf0.1" 2>/dev/null && pwd) || fail "tests/answers/sf0.1 is missing"
JOBS=${DKB_PARTITIONS_JOBS:-4}
"$DKB" gen --sf 0.01 --out "$WORK/sf0.01" -q || fail "dkb gen --sf 0.01 failed"
rc=0
probe=$("$DKB" run q06 --backend cuda --data "$WORK/sf0.01" 2>&1 >/dev/null) || rc=$?
if [ "$rc" != 0 ]; then
    if printf '%s' "$probe" | grep -Eqi 'no GPU|no usable GPU|not available in this build|without CUDA|no CUDA'; then
        echo "skip: dkb run --backend cuda has no GPU here: $(printf '%s' "$probe" | head -1)"
        exit 77
    fi
    fail "dkb run q06 --backend cuda exited $rc (not a missing GPU): $(printf '%s' "$probe" | head -3 | tr '\n' ' ')"
fi
pass "the CUDA backend runs q06"

# 3 first (cheap): --mem-budget auto
expect_fail 2 "--mem-budget auto .*--backend cuda only" -- "$DKB" run q06 --data "$WORK/sf0.01" --mem-budget auto
a=$("$DKB" run q06 --backend cuda --data "$WORK/sf0.01" --format csv --mem-budget auto 2>"$WORK/auto.err") ||
    fail "q06 --mem-budget auto failed: $(head -2 "$WORK/auto.err")"
b=$("$DKB" run q06 --backend cuda --data "$WORK/sf0.01" --format csv) || fail "q06 plain run failed"
[ "$a" = "$b" ] || fail "q06 --mem-budget auto differs from the plain run"
! grep -q partitioned "$WORK/auto.err" || fail "q06 at SF 0.01 ran partitioned under --mem-budget auto"
pass "--mem-budget auto: q06 fits the free device memory, output unchanged"

# 1: the goldens under small budgets, on CUDA
DKB_TMP="$WORK" bash "$(dirname "$0")/partitions.sh" --backend cuda --jobs "$JOBS" >"$WORK/partitions.log" 2>&1 ||
    fail "partitions.sh --backend cuda failed: $(grep -m3 '^FAIL' "$WORK/partitions.log" | tr '\n' ' ')"
tail -1 "$WORK/partitions.log"

# 2: the streamed line
D="$WORK/sf0.1p8"
"$DKB" gen --sf 0.1 --partitions 8 --out "$D" -q || fail "dkb gen --sf 0.1 --partitions 8 failed"
bad=()
re="\(([0-9]+) bytes: resident tables ([0-9]+) \+ the largest partition of [a-z]+( and [a-z]+)? ([0-9]+)\)"
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    err=$("$DKB" run "$q" --backend cuda --data "$D" --mem-budget 1 2>&1 >/dev/null) || true
    [[ $err =~ $re ]] || { bad+=("$q: no too-small message: $err"); continue; }
    resident=${BASH_REMATCH[2]} largest=${BASH_REMATCH[4]}
    for per in 2 1; do
        budget=$((resident + per * largest))
        rc=0
        "$DKB" run "$q" --backend cuda --data "$D" --format csv --mem-budget "$budget" --expect "$ANSWERS/$q-s0.csv" \
            >/dev/null 2>"$WORK/$q.err" || rc=$?
        [ "$rc" = 0 ] || { bad+=("$q +$per: exit $rc: $(grep -m1 error "$WORK/$q.err")"); continue; }
        p=$(sed -n "s/^dkb run: $q partitioned: 8 partitions in \([0-9]*\) runs\{0,1\} per pass, \([0-9]*\) pass.*streamed \([0-9]*\) bytes.*/\1 \2 \3/p" "$WORK/$q.err")
        l=$(sed -n "s/^dkb run: $q streamed: \([0-9]*\) bytes in \([0-9]*\) loads\{0,1\} through \([0-9]*\) device buffers\{0,1\} of .*pinned H2D \([0-9.na]*\) GB\/s.*/\1 \2 \3 \4/p" "$WORK/$q.err")
        [ -n "$p" ] && [ -n "$l" ] || { bad+=("$q +$per: no partitioned or streamed line: $(tr '\n' ' ' <"$WORK/$q.err" | cut -c1-200)"); continue; }
        read -r runs passes whole <<<"$p"
        read -r copied loads slots gbs <<<"$l"
        want_slots=$per
        want_loads=$((runs * passes)); [ "$runs" -le "$slots" ] && want_loads=$runs
        [ "$slots" = "$want_slots" ] || bad+=("$q +$per: $slots device buffers, expected $want_slots")
        [ "$loads" = "$want_loads" ] || bad+=("$q +$per: $loads loads for $runs runs x $passes passes")
        [ "$copied" -ge "$whole" ] || bad+=("$q +$per: copied $copied bytes, fewer than the streamed columns' $whole")
        awk -v g="$gbs" 'BEGIN { exit !(g + 0 > 1) }' || bad+=("$q +$per: pinned H2D bandwidth '$gbs' GB/s")
        [ "$q" != q01 ] || grep "streamed:" "$WORK/$q.err"
    done
done
# --time under a budget: the preload leaves lineitem on the host (q06 has no resident table)
err=$("$DKB" run q06 --backend cuda --data "$D" --mem-budget 1 2>&1 >/dev/null) || true
if [[ $err =~ $re ]]; then
    "$DKB" run q06 --backend cuda --data "$D" --mem-budget $((BASH_REMATCH[2] + 2 * BASH_REMATCH[4])) --time --runs 2 \
        >"$WORK/q06.time.out" 2>&1 || bad+=("q06 --time: failed: $(grep -m1 error "$WORK/q06.time.out")")
    grep -q "^q06 load: 0 columns, 0 bytes made resident" "$WORK/q06.time.out" ||
        bad+=("q06 --time --mem-budget: the preload made columns resident: $(grep '^q06 load' "$WORK/q06.time.out")")
fi
for m in "${bad[@]}"; do echo "FAIL: $m" >&2; done
[ "${#bad[@]}" = 0 ] || fail "${#bad[@]} streamed-line checks failed"
pass "22 queries x 2 budgets: streamed through 2 and 1 device buffers, loads = runs x passes, goldens equal"
