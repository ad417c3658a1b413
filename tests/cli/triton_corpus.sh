# triton_corpus.sh: `dkb eval --target triton` (Python candidates on the GPU:
# torch CUDA tensors over the harness's resident columns, @triton.jit
# kernels; docs/harness.md "Python candidates") classifies the Triton corpus
# at SF 0.01:
#   tests/candidates/triton/honest: Q6 full and core (Triton kernels) and Q1
#     full (torch only), valid on seed 0 and 5 random seeds; the Q1 row's
#     attribution is all library kernels, the Q6 rows' mostly their own;
#   tests/candidates/python/honest on the GPU (--target python --backend
#     cuda: the CPU torch candidates unchanged), valid;
#   tests/candidates/triton/adversarial/CASE: crash (an illegal address in
#     a Triton kernel), never_ends, wrong_answer, uninitialized_output
#     (full: torch.empty on the device; core: an output never written),
#     writes_input (a Triton store into a resident column), forbidden_import,
#     triton_knobs (a hook through triton.knobs), kernel_state (an attribute
#     on the kept compiled kernel), side_stream (ok), compile_error (Triton's
#     CompilationError, on every seed: DETAIL), stale_cache (ok slow: torch's
#     freed device blocks are poisoned after every call), respecialize (ok:
#     a tl.constexpr from the seed's parameters compiles anew in a later
#     call, through the warm set-up), jit_memo (ok: an answer stored on the
#     @triton.jit object is not there in a later call's object), each of
#     its EXPECTED class.
# Exits 77 (skipped) when dkb reports no usable GPU or no CUDA build, or the
# interpreter cannot import torch with CUDA and triton.
# Environment: CASES="a b" runs only those case directories.
source "$(dirname "$0")/lib/common.bash"

CAND="$(cd "$(dirname "$0")/../candidates/triton" && pwd)"
# the interpreter: $DKB_PYTHON, else the first of /usr/bin/python3 and
# python3 on PATH that has torch with CUDA and triton (a GPU machine's torch
# often lives in a virtual environment), passed on to dkb
PY=""
for p in ${DKB_PYTHON:-/usr/bin/python3 $(command -v python3)}; do
    if "$p" -c "import torch, triton, numpy; assert torch.cuda.is_available()" 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
    echo "SKIP: no python3 (${DKB_PYTHON:-/usr/bin/python3, python3}) imports torch (with a GPU), triton and numpy"
    exit 77
fi
export DKB_PYTHON=$PY
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q
mkdir -p "$WORK/empty"
if ! "$DKB" eval "$WORK/empty" --data "$S" --backend cuda --out "$WORK/probe" -q >"$WORK/probe.out" 2>&1; then
    if grep -qE "no usable GPU|without CUDA" "$WORK/probe.out"; then
        echo "SKIP: $(tail -1 "$WORK/probe.out")"
        exit 77
    fi
    fail "dkb eval --backend cuda on an empty directory: $(tail -3 "$WORK/probe.out")"
fi

failures=0
eval_case() {
    local name=$1 dir=$2 expected=$3
    shift 3
    local out="$WORK/results/$name" rc=0
    "$DKB" eval "$dir" --data "$S" --out "$out" --seeds 5 --min-seconds 0.2 -q "$@" \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: dkb eval $name exited $rc: $(tail -3 "$WORK/$name.stderr")" >&2
        failures=$((failures + 1))
        return
    fi
    python3 "$(dirname "$0")/lib/corpus_results.py" "$out/results.json" "$expected" "$dir" .py ||
        failures=$((failures + 1))
}

cases=$(echo ${CASES:-honest python_honest $(cd "$CAND/adversarial" && ls)})
for c in $cases; do
    case $c in
    honest) eval_case honest "$CAND/honest" "$(cat "$CAND/honest/EXPECTED")" --target triton --threads 1 ;;
    python_honest) eval_case python_honest "$CAND/../python/honest" ok --target python --backend cuda --threads 1 ;;
    *)
        d="$CAND/adversarial/$c"
        [ -f "$d/EXPECTED" ] || fail "$d/EXPECTED missing"
        extra=(--threads 1)
        [ -f "$d/ARGS" ] && read -r -a extra <"$d/ARGS"
        eval_case "$c" "$d" "$(cat "$d/EXPECTED")" --target triton "${extra[@]}"
        ;;
    esac
done

# attribution: the torch-only Q1 is all library kernels, the Triton Q6 its own
if [[ " $cases " == *" honest "* ]]; then
    python3 - "$WORK/results/honest/results.json" <<'PY' || failures=$((failures + 1))
import json, sys
rows = {(r["query"], r["mode"]): r for r in json.load(open(sys.argv[1]))["candidates"]}
def share(r):
    a = r.get("attribution") or {}
    return a.get("own_share")
q1, q6 = share(rows[("q01", "full")]), share(rows[("q06", "full")])
print(f"attribution: q01.full own share {q1}, q06.full own share {q6}")
assert q1 is not None and q1 == 0, f"q01.full (torch only): own share {q1}, expected 0"
assert q6 is not None and q6 > 0.5, f"q06.full (Triton): own share {q6}, expected > 0.5"
PY
fi
[ "$failures" = 0 ] || fail "$failures case(s) misclassified (KEEP_WORK=1 keeps $WORK)"
pass "Triton corpus classified as expected: $cases"
