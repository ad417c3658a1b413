# golden_cuda.sh: the 22 TPC-H baseline plans on the CUDA backend
# (`dkb run --backend cuda`) give DuckDB's answers, the committed golden CSVs
# tests/answers/sf<SF>/qNN-s<S>.csv, at SF 0.01 and SF 0.1 for seeds 0..5,
# as golden.sh checks for the CPU backend (golden.sh also checks that the
# goldens are current; this test only compares). Prints a pass table per
# query; every failure is listed with dkb's first error line.
#
# Exits 77 (CTest: skipped) when `dkb run --backend cuda` reports no GPU or a
# build without CUDA. Each (SF, seed) runs `dkb run all` once, under a time
# limit; a query that printed neither "ok" nor an error (a crash or a hang
# ended the run) is run again alone, so one crash does not hide the others.
# Environment: DKB_GOLDEN_CUDA_STORES=DIR uses DIR/sf0.01 and DIR/sf0.1 as the
# stores instead of generating them (bench/gpu_bench.sh passes its own).
source "$(dirname "$0")/lib/common.bash"

ANSWERS=$(cd "$(dirname "$0")/../answers" 2>/dev/null && pwd) || fail "tests/answers is missing"
SFS="0.01 0.1"
SEEDS="0 1 2 3 4 5"
RUN_LIMIT=${DKB_GOLDEN_CUDA_LIMIT:-300}   # seconds for one `dkb run all`

STORES=${DKB_GOLDEN_CUDA_STORES:-$WORK}
for sf in $SFS; do
    if [ ! -f "$STORES/sf$sf/manifest.json" ]; then
        "$DKB" gen --sf "$sf" --out "$STORES/sf$sf" -q || fail "dkb gen --sf $sf --out $STORES/sf$sf failed"
    fi
done
pass "stores at SF ${SFS// /, SF } in $STORES"

# ---- a GPU? ----
rc=0
probe=$(timeout 120 "$DKB" run q06 --backend cuda --data "$STORES/sf0.01" 2>&1 >/dev/null) || rc=$?
if [ "$rc" != 0 ]; then
    if printf '%s' "$probe" | grep -Eqi 'no GPU|not available in this build|without CUDA|no CUDA'; then
        echo "skip: dkb run --backend cuda has no GPU here: $(printf '%s' "$probe" | head -1)"
        exit 77
    fi
    fail "dkb run q06 --backend cuda exited $rc (not a missing GPU): $(printf '%s' "$probe" | head -3 | tr '\n' ' ')"
fi
pass "the CUDA backend runs q06"

# ---- every golden ----
declare -A result      # [sf,seed,qNN] = ok | the failure
total=0 passed=0
failures=()
for sf in $SFS; do
    for s in $SEEDS; do
        out="$WORK/run-sf$sf-s$s.out" err="$WORK/run-sf$sf-s$s.err"
        rc=0
        timeout "$RUN_LIMIT" "$DKB" run all --backend cuda --data "$STORES/sf$sf" --seed "$s" \
            --expect-dir "$ANSWERS/sf$sf" >"$out" 2>"$err" || rc=$?
        for n in $(seq 1 22); do
            q=$(printf 'q%02d' "$n")
            f="sf$sf/$q-s$s.csv"
            total=$((total + 1))
            if [ ! -f "$ANSWERS/$f" ]; then
                result[$sf,$s,$q]="golden $f missing"
            elif grep -Eq "^$q seed=$s( |:).*: ok, " "$out"; then
                result[$sf,$s,$q]=ok
            elif line=$(grep -E "^dkb run: error: $q[ :]" "$err" | head -1) && [ -n "$line" ]; then
                result[$sf,$s,$q]=${line#dkb run: error: }
            else
                # neither ok nor an error line: the run died (rc $rc); run this one alone
                qrc=0
                qerr=$(timeout "$RUN_LIMIT" "$DKB" run "$q" --backend cuda --data "$STORES/sf$sf" --seed "$s" \
                    --expect "$ANSWERS/$f" 2>&1 >/dev/null) || qrc=$?
                if [ "$qrc" = 0 ]; then
                    result[$sf,$s,$q]=ok
                else
                    what="exit $qrc"
                    [ "$qrc" = 124 ] && what="timed out after ${RUN_LIMIT}s"
                    [ "$qrc" -gt 128 ] && [ "$qrc" != 124 ] && what="killed by signal $((qrc - 128))"
                    result[$sf,$s,$q]="alone: $what: $(printf '%s' "$qerr" | head -2 | tr '\n' ' ')"
                fi
            fi
            if [ "${result[$sf,$s,$q]}" = ok ]; then
                passed=$((passed + 1))
            else
                failures+=("$f (SF $sf seed $s): ${result[$sf,$s,$q]}")
            fi
        done
    done
done

# ---- the table: per query, seeds passed at each SF ----
nseeds=$(echo $SEEDS | wc -w)
printf '%-6s' query
for sf in $SFS; do printf ' | %-10s' "SF $sf"; done
printf ' | %s\n' "first failure"
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    first=""
    printf '%-6s' "$q"
    for sf in $SFS; do
        k=0
        for s in $SEEDS; do
            if [ "${result[$sf,$s,$q]}" = ok ]; then k=$((k + 1)); elif [ -z "$first" ]; then
                first="SF $sf seed $s: ${result[$sf,$s,$q]}"
            fi
        done
        printf ' | %-10s' "$k/$nseeds"
    done
    printf ' | %s\n' "${first:0:160}"
done

[ "$total" = 264 ] || fail "checked $total answers, expected 264"
for m in "${failures[@]}"; do echo "FAIL: $m" >&2; done
echo "golden_cuda: $passed of $total answers match DuckDB on --backend cuda (SF ${SFS// /, SF }; seeds ${SEEDS// /,}; q01..q22), ${#failures[@]} failed"
[ "${#failures[@]}" = 0 ] || fail "${#failures[@]} of $total golden answers differ on the CUDA backend"
pass "all $total answers match DuckDB on the CUDA backend"
