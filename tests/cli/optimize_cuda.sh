# optimize_cuda.sh: `dkb optimize --target cuda` end to end against the fake
# model server (tests/tools/fake_model_server.py) on the GPU, Q6 core mode at
# SF 0.01: three scripted replies, a .cu file nvcc rejects, a CUDA candidate
# that gives a wrong answer (the honest tests/candidates/cuda/honest/
# q06.core.cu with the discount bounds widened by 0.01 on each side), then the
# honest q06.core.cu. Checks the class of each round (compile_error,
# wrong_answer, ok), that candidates are written as q06.core.cu and evaluated
# with backend cuda, that the first prompt shows the CUDA ABI and the GPU,
# that the feedback carries nvcc's diagnostics and the failing seed, that the
# report lists q06 as ok with its speedup, and that the API key is in no file
# written. Harness timing is cut short (1 extra seed, 1 warm-up, 3 timed runs,
# 0.05 s): about 20 s on an H200.
#
# Exits 77 (CTest: skipped) when `dkb run q06 --backend cuda` reports no GPU
# or a build without CUDA (the probe of golden_cuda.sh). The parts that need
# no GPU (the CUDA prompt, the early failure without a GPU) are in
# optimize_cuda_prompt.sh.
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HONEST="$ROOT/tests/candidates/cuda/honest/q06.core.cu"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q || fail "dkb gen --sf 0.01 --out $S failed"

# ---- a GPU? ----
rc=0
probe=$(timeout 120 "$DKB" run q06 --backend cuda --data "$S" 2>&1 >/dev/null) || rc=$?
if [ "$rc" != 0 ]; then
    if printf '%s' "$probe" | grep -Eqi 'no GPU|not available in this build|without CUDA|no CUDA'; then
        echo "skip: dkb run --backend cuda has no GPU here: $(printf '%s' "$probe" | head -1)"
        exit 77
    fi
    fail "dkb run q06 --backend cuda exited $rc (not a missing GPU): $(printf '%s' "$probe" | head -3 | tr '\n' ' ')"
fi
pass "the CUDA backend runs q06"

KEY="sk-test-SECRET-$$-do-not-write"
export DKB_TEST_KEY="$KEY"
QUICK=(--data "$S" --queries q06 --target cuda --mode core --seeds 1 --warmup 1 --min-runs 3 --min-seconds 0.05
    --threads 1 --timeout 60 --jobs 1)

# ---- the scripted replies ----
fence() { printf 'Here is the file.\n\n```cuda\n'; cat "$1"; printf '```\n'; }
cat >"$WORK/cerr.cu" <<'CU'
#include "dkb/candidate.h"

__global__ void q06_broken(long long *revenue) { revenue[0] = dkb_no_such_identifier; }

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)in;
    q06_broken<<<1, 1, 0, dkb_cand_stream(env)>>>((long long *)dkb_cand_vec_find(out, "revenue")->data);
    return 0;
}
CU
fence "$WORK/cerr.cu" >"$WORK/cerr.md"
# discount between disc_lo - 0.01 and disc_hi + 0.01: wrong at the qualification parameters (seed 0)
sed 's/(uint64_t)d\[i\] - (uint64_t)dlo <= dw)/(uint64_t)d[i] - (uint64_t)(dlo - 1) <= dw + 2)/' "$HONEST" >"$WORK/wrong.cu"
grep -q "(dlo - 1) <= dw + 2" "$WORK/wrong.cu" || fail "could not make the wrong candidate from $HONEST"
fence "$WORK/wrong.cu" >"$WORK/wrong.md"
fence "$HONEST" >"$WORK/correct.md"
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
steps = [{"content_file": w + "/cerr.md"}, {"content_file": w + "/wrong.md"}, {"content_file": w + "/correct.md"}]
json.dump({"steps": steps}, open(w + "/script.json", "w"))
PY

rm -f "$WORK/port"
python3 "$ROOT/tests/tools/fake_model_server.py" --script "$WORK/script.json" --port-file "$WORK/port" \
    --log "$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port") || fail "fake server did not start"

R="$WORK/run"
t0=$SECONDS
rc=0
"$DKB" optimize --model fake-coder --base-url "http://127.0.0.1:$PORT/v1" --api-key-env DKB_TEST_KEY \
    --rounds 3 --out "$R" "${QUICK[@]}" >"$WORK/out" 2>"$WORK/err" || rc=$?
elapsed=$((SECONDS - t0))
kill "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
[ "$rc" = 0 ] || fail "dkb optimize --target cuda exited $rc: $(cat "$WORK/err")"
pass "dkb optimize --target cuda ran 3 rounds in ${elapsed}s"

# ---- one line per round: class, candidate file, harness detail ----
python3 - "$R" >"$WORK/rounds" <<'PY' || fail "trajectory: $(cat "$WORK/rounds")"
import json, sys
run = sys.argv[1]
for l in open(run + "/trajectory.jsonl"):
    r = json.loads(l)
    if r["type"] == "attempt":
        print(r["round"], r["class"], r.get("file", "-"), "|", (r.get("detail") or "")[:200].replace("\n", " "))
PY
cat "$WORK/rounds"
classes=$(awk '{print $1, $2}' "$WORK/rounds")
want=$'1 compile_error\n2 wrong_answer\n3 ok'
[ "$classes" = "$want" ] || fail "classes per round: got '$(tr '\n' ',' <<<"$classes")', want '$(tr '\n' ',' <<<"$want")' (rounds above)"
grep -q '"type":"done"' "$R/trajectory.jsonl" || fail "no done record in $R/trajectory.jsonl"
pass "classes per round: compile_error, wrong_answer, ok"

# ---- .cu files, evaluated with backend cuda ----
for k in 01 02 03; do
    f="$R/work/q06.core/r$k.s00/cand/q06.core.cu"
    [ -f "$f" ] || fail "round $k: no candidate file $f ($(ls "$R/work/q06.core/r$k.s00/cand" 2>&1))"
done
cmp -s "$R/work/q06.core/r03.s00/cand/q06.core.cu" "$HONEST" || fail "round 3's candidate is not the honest q06.core.cu"
python3 - "$R" <<'PY' || fail "the evaluations were not on backend cuda"
import json, sys
for k in ("02", "03"):
    doc = json.load(open(f"{sys.argv[1]}/work/q06.core/r{k}.s00/eval/results.json"))
    backend = doc["config"]["backend"]
    files = [c.get("file", "") for c in doc["candidates"]]
    assert backend == "cuda", f"round {k}: backend {backend}"
    assert files and all(f.endswith("q06.core.cu") for f in files), f"round {k}: files {files}"
PY
pass "candidates written as q06.core.cu and evaluated with backend cuda"

# ---- the prompt, and the feedback that reached the model ----
python3 - "$WORK/server.log" <<'PY' || fail "prompt or feedback not in the requests (log: $WORK/server.log)"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
bodies = [r["body"] for r in reqs if isinstance(r.get("body"), dict)]
assert len(bodies) == 3, f"{len(bodies)} requests, expected 3"
first = bodies[0]["messages"][1]["content"]
for want in ("q06.core.cu", "CUDA C", "DEVICE pointers", "dkb_cand_stream(env)", "```cuda", "Hardware context",
             "compute capability"):
    assert want in first, f"first prompt lacks {want!r}"
fb1, fb2 = bodies[1]["messages"][-1]["content"], bodies[2]["messages"][-1]["content"]
assert "compile_error" in fb1, "round 1 feedback lacks the class: " + fb1[:400]
assert 'dkb_no_such_identifier" is undefined' in fb1, "round 1 feedback lacks nvcc's diagnostic: " + fb1[:1500]
assert "wrong_answer" in fb2 and "seed" in fb2, "round 2 feedback lacks the wrong answer's seed: " + fb2[:1500]
assert all(r["authorization"] == "present" for r in reqs), "key not sent"
print("ok: first prompt has the CUDA ABI and the GPU; feedback has nvcc's diagnostic and the failing seed")
PY

# ---- the report: q06 ok, with its speedup ----
row=$(grep -E '^\| fake-coder \| cuda \| q06 \| core \|' "$WORK/out" || true)
echo "$row"
# the last cell: the best attempt's kernel attribution (own / library ms, own share)
grep -Eq '^\| fake-coder \| cuda \| q06 \| core \| ok \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x \| 3 \| [0-9.]+ / [0-9.]+ \([0-9.]+%\) \|$' <<<"$row" \
    || fail "report row for q06: '$row' (stdout: $(cat "$WORK/out"))"
grep -q "| fake-coder | cuda | core | 1 | 100.0%" "$WORK/out" || fail "totals row: $(cat "$WORK/out")"
raw=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "attempt" and r["class"] == "ok": print("%.3f" % r["raw_speedup"])' "$R/trajectory.jsonl")
"$DKB" report "$R" >"$WORK/report.md" || fail "dkb report exit $?"
grep -q "| fake-coder | cuda | q06 | core | ok |" "$WORK/report.md" || fail "dkb report: $(cat "$WORK/report.md")"
pass "report lists q06 as ok (raw speedup ${raw}x over the CUDA baseline)"

# ---- no key in any file written ----
if grep -rl -- "$KEY" "$R" "$WORK/server.log" "$WORK/out" "$WORK/err"; then fail "the API key was written"; fi
pass "no API key in the run directory, the server log or the output"
[ "$elapsed" -le 60 ] || echo "note: the loop took ${elapsed}s (expected under 60 s on an H200)"
