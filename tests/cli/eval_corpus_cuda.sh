# eval_corpus_cuda.sh: `dkb eval --backend cuda` classifies the CUDA
# candidate corpus (tests/candidates/cuda) correctly at SF 0.01.
#
# tests/candidates/cuda/honest holds correct candidates (Q6 core and full,
# Q4 full built from CUB); tests/candidates/cuda/adversarial/CASE/ one or
# two candidates per case, with an EXPECTED file holding the verdict every
# row must have: illegal_address (crash), never_ends (timeout), side_stream
# (ok: work left on a side stream is timed by the device-wide
# synchronisation), writes_input (wrote_input: checksums),
# uninitialized_output (wrong_answer: poisoned device outputs),
# forbidden_symbol (cudaDeviceReset, cudaIpcOpenMemHandle), compile_error;
# and the device-state caches, each "ok slow" (every call misses: no state
# survives a call): cuda_pool_cache (stream-ordered pool memory),
# cuda_malloc_cache (cudaMalloc/cudaFree), cuda_stream_attr_cache (a leaked
# block found through the stream's access-policy window),
# cuda_device_var_cache (__device__), cuda_constant_var_cache
# (__constant__, cudaMemcpyToSymbol), cuda_func_attr_cache (kernel
# attributes). Directories with two files also show that the candidate
# after a crash or a write runs normally without reloading the data.
#
# Exits 77 (skipped) when dkb reports no usable GPU or no CUDA build.
# Environment: CASES="a b" runs only those case directories.
source "$(dirname "$0")/lib/common.bash"

CAND="$(cd "$(dirname "$0")/../candidates/cuda" && pwd)"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q

# Is there a GPU? An empty candidate directory evaluates nothing but loads
# the store onto the GPU.
skip_without_cuda_eval "$S"

failures=0
eval_case() {
    local name=$1 dir=$2 expected=$3
    shift 3
    local out="$WORK/results/$name" rc=0
    "$DKB" eval "$dir" --data "$S" --backend cuda --out "$out" --seeds 3 --min-seconds 0.2 -q "$@" \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: dkb eval $name exited $rc: $(tail -3 "$WORK/$name.stderr")" >&2
        failures=$((failures + 1))
        return
    fi
    python3 "$(dirname "$0")/lib/corpus_results.py" "$out/results.json" "$expected" "$dir" .cu \
        || failures=$((failures + 1))
}

cases=$(echo ${CASES:-honest $(cd "$CAND/adversarial" && ls)})
for c in $cases; do
    if [ "$c" = honest ]; then
        eval_case honest "$CAND/honest" "$(cat "$CAND/honest/EXPECTED")"
        # kernel attribution (docs/harness.md): every ok row has it, or a note why not
        python3 - "$WORK/results/honest/results.json" <<'PY' || failures=$((failures + 1))
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
for r in doc["candidates"]:
    if r["class"] != "ok":
        continue
    row, a, note = f'{r["query"]} {r["mode"]}', r.get("attribution"), r.get("attribution_note")
    if a is None:
        if note:
            print(f"note: {row}: no kernel attribution: {note}")
        else:
            bad.append(f"{row}: attribution null without a note")
        continue
    share = a.get("own_share")
    if (a["kernels"] < 1 or a["own_kernels"] + a["library_kernels"] != a["kernels"] or not a["top"]
            or share is None or not 0 <= share <= 1 or a["own_ms"] + a["library_ms"] <= 0):
        bad.append(f"{row}: {a}")
    else:
        print(f'{row}: own {a["own_ms"]:.3f} ms, library {a["library_ms"]:.3f} ms, {a["kernels"]} kernels, '
              f'top {a["top"][0]["name"]}')
for b in bad:
    print("FAIL: kernel attribution:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
        continue
    fi
    d="$CAND/adversarial/$c"
    [ -f "$d/EXPECTED" ] || fail "$d/EXPECTED missing"
    extra=()
    [ "$c" = never_ends ] && extra+=(--timeout 15)
    eval_case "$c" "$d" "$(cat "$d/EXPECTED")" "${extra[@]}"
done

[ "$failures" = 0 ] || fail "$failures case(s) misclassified (KEEP_WORK=1 keeps $WORK)"
pass "CUDA corpus classified as expected: $cases"
