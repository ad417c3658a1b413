#!/usr/bin/env bash
# device_check.sh: what a GPU machine checks first, in bounded steps (each
# fits one 10-minute call of a lent machine; run them back to back while it
# is warm: the build and stores are reused):
#   tests   build (Release, CUDA, sm_90) and run the GPU-only tests:
#           golden_cuda, eval_corpus_cuda, eval_gpus_cuda, optimize_cuda,
#           partitions_cuda, sql_tpch_cuda
#           (CTest; each skips with 77 only without a GPU)
#   experts the 22 CUDA experts through `dkb eval --backend cuda` at SF 1
#           (seed 0 + 5 random seeds): every row must be ok
#   bench   `dkb bench --sf 10` and the PyTorch peer (bench/torch/run.py,
#           eager, best of 5) on the same store in the same call
# Results under $OUT (or --out DIR): one log per step and summary.txt,
# printed last. Exit 0 when every step run passed.
#   bench/device_check.sh tests            # first call
#   bench/device_check.sh experts bench    # second call, same machine
# Before: tools/devdeps.sh here, and carry [".devdeps"] in every call.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# what the machine lacks (cJSON, libduckdb), carried in .devdeps/ (tools/devdeps.sh)
[ -f "$ROOT/.devdeps/env.sh" ] && source "$ROOT/.devdeps/env.sh"
OUTDIR=${OUT:-$ROOT/device-check}
BUILD=$ROOT/build-device
JOBS=$(nproc)
STEPS=()
while [ $# -gt 0 ]; do
    case $1 in
    --out) OUTDIR=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    tests|experts|bench) STEPS+=("$1"); shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "device_check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ ${#STEPS[@]} -gt 0 ] || STEPS=(tests experts bench)
mkdir -p "$OUTDIR" || exit 1
SUM=$OUTDIR/summary.txt
: >"$SUM"
status=0
say() { echo "$*" | tee -a "$SUM"; }
step() {   # step NAME STATUS SECONDS NOTE
    say "$(printf '%-10s %-7s %6ss  %s' "$1" "$2" "$3" "$4")"
    [ "$2" = ok ] || status=1
}
since() { echo $(( $(date +%s) - $1 )); }

build() {
    # incremental: a second call on the same machine rebuilds only what changed
    local t; t=$(date +%s)
    if { cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release && cmake --build "$BUILD" -j "$JOBS"; } \
        >"$OUTDIR/build.log" 2>&1; then
        step build ok "$(since "$t")" "$BUILD"
    else
        step build FAILED "$(since "$t")" "$(grep -m3 -E 'error' "$OUTDIR/build.log" | tr '\n' ' ')"
        return 1
    fi
}
store() {   # store SF: /tmp/dkb-sfSF, generated once
    [ -f "/tmp/dkb-sf$1/manifest.json" ] || "$BUILD/dkb" gen --sf "$1" --out "/tmp/dkb-sf$1" -j "$JOBS" -q --force
}

build || { cat "$SUM"; exit 1; }
for s in "${STEPS[@]}"; do
    t=$(date +%s)
    case $s in
    tests)
        if ctest --test-dir "$BUILD" -R 'golden_cuda|eval_corpus_cuda|eval_gpus_cuda|optimize_cuda$|partitions_cuda|sql_tpch_cuda|eval_budget_cuda' -j 4 \
            --timeout 500 --output-on-failure >"$OUTDIR/tests.log" 2>&1; then
            step tests ok "$(since "$t")" "$(grep -m1 'tests passed' "$OUTDIR/tests.log")"
        else
            step tests FAILED "$(since "$t")" "$(grep -A8 'tests FAILED' "$OUTDIR/tests.log" | tr '\n' ' ')"
        fi
        grep -q "Skipped\|Not Run" "$OUTDIR/tests.log" && say "           (some skipped: $(grep -E 'Skipped|Not Run' "$OUTDIR/tests.log" | tr -s ' ' | tr '\n' ';'))"
        ;;
    experts)
        store 1
        "$BUILD/dkb" eval "$ROOT/src/kernels/cuda" --backend cuda --data /tmp/dkb-sf1 --mode full --seeds 5 \
            --min-seconds 0.1 --out "$OUTDIR/experts-sf1" -q >"$OUTDIR/experts.log" 2>&1
        note=$(python3 - "$OUTDIR/experts-sf1/results.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["candidates"]
bad = ["%s %s: %s" % (r["query"], r["class"], r["detail"][:120]) for r in rows if r["class"] != "ok"]
print("%d of %d ok%s" % (len(rows) - len(bad), len(rows), ("; " + "; ".join(bad)) if bad else ""))
sys.exit(0 if len(rows) == 22 and not bad else 1)
PY
) && step experts ok "$(since "$t")" "$note" || step experts FAILED "$(since "$t")" "${note:-no results: see experts.log}"
        ;;
    bench)
        store 10
        "$BUILD/dkb" bench --sf 10 --data /tmp/dkb-sf10 --out "$OUTDIR/bench-sf10" -q >"$OUTDIR/bench.log" 2>&1
        rc=$?
        py=python3; [ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3
        timeout 200 "$py" "$ROOT/bench/torch/run.py" --store /tmp/dkb-sf10 --dkb "$BUILD/dkb" --no-compile --reps 5 \
            --warmup 1 --json "$OUTDIR/torch-sf10.json" >"$OUTDIR/torch.log" 2>&1
        trc=$?
        note=$(tail -4 "$OUTDIR/bench.log" | tr '\n' ' ')
        [ "$rc" = 0 ] && step bench ok "$(since "$t")" "$note" || step bench FAILED "$(since "$t")" "exit $rc: $note"
        [ "$trc" = 0 ] && step torch ok 0 "$(tail -2 "$OUTDIR/torch.log" | tr '\n' ' ')" ||
            step torch FAILED 0 "exit $trc: $(tail -3 "$OUTDIR/torch.log" | tr '\n' ' ')"
        ;;
    esac
done
echo "---- summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)) ----"
cat "$SUM"
exit $status
