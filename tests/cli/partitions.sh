# partitions.sh: `dkb run --mem-budget` (docs/partitions.md). At SF 0.1
# with 8 partitions per table, every query runs under a budget of its
# resident tables plus two of its largest partition (read from the
# too-small-budget error, which must name the query and what it needs), so
# at least 4 runs of partitions per pass, and plus one (8 runs, one
# partition each); for seeds 0..5 its --format csv
# output must be byte-identical to the unpartitioned run's and match the
# golden answer (tests/answers/sf0.1, as golden.sh checks). Also: a budget
# that fits changes nothing, a store of one partition is refused in one
# line, and bad sizes are usage errors (the CUDA experts and candidates
# under a budget: tests/cli/eval_budget_cuda.sh).
# Any difference fails the test.
#
# Options (CTest runs it without any: CPU backend, one query at a time):
#   --backend cpu|cuda  the backend of every run (env DKB_PARTITIONS_BACKEND);
#                       cuda exits 77 when dkb reports no GPU
#   --jobs N            queries checked at once (env DKB_PARTITIONS_JOBS; 1)
# bench/device_partitions.sh runs it with --backend cuda --jobs 8 on a GPU.
source "$(dirname "$0")/lib/common.bash"

BACKEND=${DKB_PARTITIONS_BACKEND:-cpu}
JOBS=${DKB_PARTITIONS_JOBS:-1}
while [ $# -gt 0 ]; do
    case $1 in
    --backend) BACKEND=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    *) fail "partitions.sh: unknown argument $1 (--backend cpu|cuda, --jobs N)" ;;
    esac
done
case $BACKEND in cpu|cuda) ;; *) fail "--backend $BACKEND: expected cpu or cuda" ;; esac
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || fail "--jobs $JOBS: expected a positive number"
B=(--backend "$BACKEND")

ANSWERS=$(cd "$(dirname "$0")/../answers/sf0.1" 2>/dev/null && pwd) || fail "tests/answers/sf0.1 is missing"
SEEDS="0 1 2 3 4 5"
D="$WORK/sf0.1p8"
"$DKB" gen --sf 0.1 --partitions 8 --out "$D" -q || fail "dkb gen --sf 0.1 --partitions 8 failed"
"$DKB" gen --sf 0.01 --out "$WORK/sf0.01" -q || fail "dkb gen --sf 0.01 failed"
pass "stores at SF 0.1 (8 partitions) and SF 0.01 (1 partition)"

if [ "$BACKEND" = cuda ]; then
    rc=0
    probe=$("$DKB" run q06 "${B[@]}" --data "$WORK/sf0.01" 2>&1 >/dev/null) || rc=$?
    if [ "$rc" != 0 ]; then
        if printf '%s' "$probe" | grep -Eqi 'no GPU|no usable GPU|not available in this build|without CUDA|no CUDA'; then
            echo "skip: dkb run --backend cuda has no GPU here: $(printf '%s' "$probe" | head -1)"
            exit 77
        fi
        fail "dkb run q06 --backend cuda exited $rc (not a missing GPU): $(printf '%s' "$probe" | head -3 | tr '\n' ' ')"
    fi
    pass "the CUDA backend runs q06"
fi

# bad sizes: usage errors
for bad in 0 -5 12X 1.5G M ""; do
    expect_fail 2 "mem-budget" -- "$DKB" run q06 "${B[@]}" --data "$D" --mem-budget "$bad"
done

# one partition: refused, naming the query and the remedy
expect_fail 1 "^dkb run: error: q01: not partitioned: .*one partition of lineitem .*--partitions" -- \
    "$DKB" run q01 "${B[@]}" --data "$WORK/sf0.01" --mem-budget 100K


# check_query qNN: every check of one query; its outcome in $WORK/$q.res
# ("ok: ..." and "FAIL: ..." lines, then "checked N")
check_query() {
    local q=$1 res="$WORK/$1.res" checked=0
    : >"$res"
    bad() { echo "FAIL: $*" >>"$res"; }
    # too small: exit 1, one line naming the query and what it needs
    local rc=0 err
    err=$("$DKB" run "$q" "${B[@]}" --data "$D" --mem-budget 1 2>&1 >/dev/null) || rc=$?
    [ "$rc" = 1 ] || { bad "$q: --mem-budget 1 exited $rc, expected 1: $err"; return; }
    [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || { bad "$q: --mem-budget 1 printed more than one line: $err"; return; }
    local re="^dkb run: error: $q: --mem-budget 1 bytes is too small: it needs at least [0-9.]+[KMG]? \(([0-9]+) bytes: resident tables ([0-9]+) \+ the largest partition of [a-z]+( and [a-z]+)? ([0-9]+)\)"
    [[ $err =~ $re ]] || { bad "$q: unexpected too-small message: $err"; return; }
    local need=${BASH_REMATCH[1]} resident=${BASH_REMATCH[2]} largest=${BASH_REMATCH[4]}
    [ "$need" = $((resident + largest)) ] || { bad "$q: needs $need != $resident + $largest"; return; }

    # a budget that fits: exactly the plain run, no partitioning
    local plain fit
    plain=$("$DKB" run "$q" "${B[@]}" --data "$D" --format csv) || { bad "$q: plain run failed"; return; }
    fit=$("$DKB" run "$q" "${B[@]}" --data "$D" --format csv --mem-budget 64G 2>"$WORK/$q.fit.err") ||
        { bad "$q: --mem-budget 64G failed: $(head -1 "$WORK/$q.fit.err")"; return; }
    [ "$fit" = "$plain" ] || bad "$q: --mem-budget 64G output differs from the plain run"
    ! grep -q partitioned "$WORK/$q.fit.err" || bad "$q: --mem-budget 64G ran partitioned"

    # the unpartitioned run of each seed, once
    local s
    declare -A base=()
    for s in $SEEDS; do
        base[$s]=$("$DKB" run "$q" "${B[@]}" --data "$D" --seed "$s" --format csv) ||
            { bad "$q seed $s: unpartitioned run failed"; base[$s]="(failed)"; }
    done

    # two budgets: two of the largest partitions (at least 4 runs of
    # partitions), and one (every partition a run of its own: 8 runs)
    local per budget golden part runs
    for per in 2 1; do
        budget=$((resident + per * largest))
        for s in $SEEDS; do
            golden="$ANSWERS/$q-s$s.csv"
            [ -f "$golden" ] || { bad "$q seed $s: $golden missing"; continue; }
            checked=$((checked + 1))
            [ "${base[$s]}" != "(failed)" ] || continue
            rc=0
            part=$("$DKB" run "$q" "${B[@]}" --data "$D" --seed "$s" --format csv --mem-budget "$budget" \
                --expect "$golden" 2>"$WORK/$q.part.err") || rc=$?
            [ "$rc" = 0 ] ||
                { bad "$q seed $s: --mem-budget $budget exited $rc: $(grep -v partitioned "$WORK/$q.part.err" | head -2 | tr '\n' ' ')"; continue; }
            runs=$(sed -n "s/^dkb run: $q partitioned: 8 partitions in \([0-9]*\) runs per pass.*/\1/p" "$WORK/$q.part.err")
            { [ -n "$runs" ] && [ "$runs" -ge $((8 / (2 * per))) ] && { [ "$per" = 2 ] || [ "$runs" = 8 ]; }; } ||
                { bad "$q seed $s: --mem-budget $budget ran in ${runs:-no} runs of partitions: $(head -1 "$WORK/$q.part.err")"; continue; }
            [ "$part" = "${base[$s]}" ] ||
                { bad "$q seed $s: partitioned output ($runs runs) differs from the unpartitioned run"; continue; }
        done
        echo "ok: $q: budget $budget bytes (resident $resident + $per x $largest), ${runs:-no} runs of partitions, seeds ${SEEDS// /,}" >>"$res"
    done
    echo "checked $checked" >>"$res"
}

running=0
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    if [ "$JOBS" = 1 ]; then
        check_query "$q"
    else
        check_query "$q" &
        running=$((running + 1))
        if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
    fi
done
wait

failures=()
checked=0
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    [ -f "$WORK/$q.res" ] || { failures+=("$q: no outcome (the check died)"); continue; }
    grep '^ok: ' "$WORK/$q.res" || true
    while IFS= read -r m; do failures+=("${m#FAIL: }"); done < <(grep '^FAIL: ' "$WORK/$q.res" || true)
    k=$(sed -n 's/^checked \([0-9]*\)$/\1/p' "$WORK/$q.res")
    [ -n "$k" ] || { grep -q '^FAIL: ' "$WORK/$q.res" || failures+=("$q: the check ended early"); k=0; }
    checked=$((checked + k))
done

for m in "${failures[@]}"; do echo "FAIL: $m" >&2; done
[ "$checked" = 264 ] || fail "checked $checked answers, expected 264 (22 queries x 6 seeds x 2 budgets)"
[ "${#failures[@]}" = 0 ] || fail "${#failures[@]} partitioned checks failed"
pass "all 22 queries x 6 seeds x 2 budgets partitioned on --backend $BACKEND: byte-identical to the unpartitioned runs and equal to the goldens"
