#!/usr/bin/env bash
# device_budget.sh: issue 15's CUDA figures on a GPU machine (candidates and
# experts under --mem-budget), in steps that each fit a 10-minute call:
#   tests    build-device/ (built here when missing or stale) and CTest's
#            cli.eval_budget_cuda (the CUDA budget corpus, the experts
#            under a small budget at SF 0.1)
#   experts  the 22 CUDA experts without a budget at SF 1 (seed 0 + 2
#            seeds): the streaming rewrite must not have changed them
#   sf10     dkb bench --backend cuda --mem-budget ${BUDGET10:-1G} on SF 10
#            with 8 partitions (/tmp/dkb-sf10p8, generated once): per query
#            baseline and expert ms, bytes each streamed, the transfer floor
#   sf100    the largest store: dkb gen --sf ${SF_BIG:-100} --columns queries
#            --partitions 64 into /dev/shm (once), then dkb bench --mem-budget
#            ${BUDGET_BIG:-14G} (about a quarter of its 54 GB) --quick
# Results under $OUT (or ./device-budget): a log per step and summary.txt,
# printed last. Before: tools/devdeps.sh here; carry [".devdeps"].
#   bench/device_budget.sh tests experts sf10     # first call
#   bench/device_budget.sh sf100                  # second call, same machine
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
[ -f "$ROOT/.devdeps/env.sh" ] && source "$ROOT/.devdeps/env.sh"
OUTDIR=${OUT:-$ROOT/device-budget}
BUILD=$ROOT/build-device
DKB=$BUILD/dkb
JOBS=$(nproc)
mkdir -p "$OUTDIR" || exit 1
SUM=$OUTDIR/summary.txt
: >"$SUM"
status=0
say() { echo "$*" | tee -a "$SUM"; }
since() { echo $(( $(date +%s) - $1 )); }
step() { say "$(printf '%-8s %-7s %5ss  %s' "$1" "$2" "$3" "$4")"; [ "$2" = ok ] || status=1; }
case " $* " in *" -h "*|*" --help "*) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac

t=$(date +%s)
if { cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release && cmake --build "$BUILD" -j "$JOBS"; } >"$OUTDIR/build.log" 2>&1; then
    step build ok "$(since "$t")" "$BUILD"
else
    step build FAILED "$(since "$t")" "$(grep -m3 ' error' "$OUTDIR/build.log" | tr '\n' ' ')"
    cat "$SUM"
    exit 1
fi

# valid_count RESULTS.JSON: "V of N valid; not ok: q.. verdict (detail)..."
valid_count() {
    python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc.get("candidates") or doc.get("bench", {}).get("queries") or []
bad = []
for r in rows:
    v = r.get("verdict") or r.get("class")
    if v not in ("ok", "valid"):
        bad.append("%s %s (%s)" % (r.get("query"), v, str(r.get("detail") or r.get("note") or "")[:150]))
print("%d of %d ok%s" % (len(rows) - len(bad), len(rows), "; not ok: " + "; ".join(bad) if bad else ""))
PY
}

bench_store() {   # bench_store NAME STORE BUDGET [bench options]: dkb bench under the budget, its table
    local name=$1 store=$2 budget=$3 t
    shift 3
    t=$(date +%s)
    if "$DKB" bench --backend cuda --data "$store" --mem-budget "$budget" --out "$OUTDIR/$name" -q "$@" \
        >"$OUTDIR/$name.txt" 2>"$OUTDIR/$name.err"; then
        step "$name" ok "$(since "$t")" "$(grep -m2 -E '^pass rate|^overall' "$OUTDIR/$name.txt" | tr '\n' ' ')"
        sed -n '/^streamed under/,/^$/p' "$OUTDIR/$name.txt" | tee -a "$SUM"
        grep -E '^q[0-9]{2} ' "$OUTDIR/$name.txt" | awk '{print "  " $0}' | cut -c1-120 | tee -a "$SUM" >/dev/null
    else
        step "$name" FAILED "$(since "$t")" "$(tail -3 "$OUTDIR/$name.err" | tr '\n' ' ')"
    fi
}

for s in "$@"; do
    t=$(date +%s)
    case $s in
    tests)
        if ctest --test-dir "$BUILD" -R 'eval_budget_cuda' --timeout 500 --output-on-failure >"$OUTDIR/tests.log" 2>&1; then
            step tests ok "$(since "$t")" "$(grep -m1 'tests passed' "$OUTDIR/tests.log")"
        else
            step tests FAILED "$(since "$t")" "$(grep -E 'FAIL|not ok' "$OUTDIR/tests.log" | head -8 | tr '\n' ' ')"
        fi ;;
    experts)
        [ -f /tmp/dkb-sf1/manifest.json ] || "$DKB" gen --sf 1 --out /tmp/dkb-sf1 -j "$JOBS" -q --force
        "$DKB" eval "$ROOT/src/kernels/cuda" --backend cuda --data /tmp/dkb-sf1 --mode full --seeds 2 \
            --min-seconds 0.1 --out "$OUTDIR/experts-sf1" -q >"$OUTDIR/experts.log" 2>&1
        note=$(valid_count "$OUTDIR/experts-sf1/results.json" 2>&1)
        case $note in "22 of 22 ok"*) step experts ok "$(since "$t")" "SF 1 unbudgeted: $note" ;;
                      *) step experts FAILED "$(since "$t")" "SF 1 unbudgeted: $note" ;; esac ;;
    sf10)
        [ -f /tmp/dkb-sf10p8/manifest.json ] ||
            "$DKB" gen --sf 10 --partitions 8 --out /tmp/dkb-sf10p8 -j "$JOBS" -q --force
        bench_store sf10 /tmp/dkb-sf10p8 "${BUDGET10:-1G}" --seeds 2 --quick ;;
    sf100)
        big=/dev/shm/dkb-sf${SF_BIG:-100}
        if [ ! -f "$big/manifest.json" ]; then
            "$DKB" gen --sf "${SF_BIG:-100}" --columns queries --partitions 64 --out "$big" -j "$JOBS" -q --force ||
                { step gen FAILED "$(since "$t")" "dkb gen --sf ${SF_BIG:-100}"; continue; }
            step gen ok "$(since "$t")" "$big: $(du -sh "$big" | cut -f1)"
        fi
        bench_store sf100 "$big" "${BUDGET_BIG:-14G}" --seeds 1 --quick --no-verify ;;
    *) step "$s" FAILED 0 "unknown step (tests, experts, sf10, sf100)" ;;
    esac
done
echo "---- summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)) ----"
cat "$SUM"
exit $status
