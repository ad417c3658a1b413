# eval_gpus_cuda.sh: `dkb eval --backend cuda --gpus N` (rows spread over
# N GPUs, one timed worker per GPU: src/harness/eval_slots.h) on a GPU
# machine: --gpus 1 evaluates the honest CUDA corpus as a plain run does;
# asking for more GPUs than the machine has is one line, exit 1; and with
# two GPUs or more, --gpus 2 gives every row the verdict --gpus 1 gives.
#
# Exits 77 (skipped) when dkb reports no usable GPU or no CUDA build.
source "$(dirname "$0")/lib/common.bash"

CAND="$(cd "$(dirname "$0")/../candidates/cuda/honest" && pwd)"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q

skip_without_cuda_eval "$S"
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] && n=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
[ "$n" -ge 1 ] || fail "no GPU counted (nvidia-smi -L)"

verdicts() { python3 -c 'import json,sys; print(" ".join("%s.%s=%s" % (r["query"], r["mode"], r["class"]) for r in json.load(open(sys.argv[1]))["candidates"]))' "$1"; }

"$DKB" eval "$CAND" --data "$S" --backend cuda --gpus 1 --seeds 2 --min-seconds 0.1 --out "$WORK/g1" -q >/dev/null 2>"$WORK/g1.err" ||
    fail "--gpus 1 exited $?: $(tail -3 "$WORK/g1.err")"
one=$(verdicts "$WORK/g1/results.json")
[ -n "$one" ] && ! tr ' ' '\n' <<<"$one" | grep -qv '=ok$' || fail "--gpus 1: not every row ok: $one"
pass "--gpus 1: $one"

expect_fail 1 "--gpus $((n + 1)): this machine has $n GPU" -- \
    "$DKB" eval "$CAND" --data "$S" --backend cuda --gpus $((n + 1)) --out "$WORK/gx" -q

if [ "$n" -ge 2 ]; then
    "$DKB" eval "$CAND" --data "$S" --backend cuda --gpus 2 --seeds 2 --min-seconds 0.1 --out "$WORK/g2" -q >/dev/null \
        2>"$WORK/g2.err" || fail "--gpus 2 exited $?: $(tail -3 "$WORK/g2.err")"
    two=$(verdicts "$WORK/g2/results.json")
    [ "$two" = "$one" ] || fail "--gpus 2 gave $two, --gpus 1 $one"
    pass "--gpus 2: the same verdicts"
else
    echo "note: one GPU here: --gpus 2 not exercised"
fi
echo "eval_gpus_cuda: ok"
