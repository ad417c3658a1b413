# optimize_triton.sh: `dkb optimize --target triton` end to end against the
# fake model server (tests/tools/fake_model_server.py) on the GPU, Q6 full
# mode at SF 0.01: three scripted replies, a Python syntax error, a Triton
# candidate with a wrong answer (tests/candidates/triton/adversarial/
# wrong_answer), then the honest tests/candidates/triton/honest/q06.full.py.
# Checks the class of each round (compile_error, wrong_answer, ok), that
# candidates are written as q06.full.py and evaluated with backend cuda and
# target triton, that the first prompt shows candidate.py, the Triton notes
# and the GPU, that the feedback names the syntax error and the failing
# seed, and that the report lists q06 under target triton as ok.
# Exits 77 (skipped) without a GPU, a CUDA build, or a python3 with torch
# (CUDA) and triton (as triton_corpus.sh).
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HONEST="$ROOT/tests/candidates/triton/honest/q06.full.py"
WRONG="$ROOT/tests/candidates/triton/adversarial/wrong_answer/q06.full.py"
PY=""
for p in ${DKB_PYTHON:-/usr/bin/python3 $(command -v python3)}; do
    if "$p" -c "import torch, triton, numpy; assert torch.cuda.is_available()" 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "SKIP: no python3 imports torch (with a GPU), triton and numpy"; exit 77; }
export DKB_PYTHON=$PY
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q || fail "dkb gen --sf 0.01 --out $S failed"
rc=0
probe=$(timeout 120 "$DKB" run q06 --backend cuda --data "$S" 2>&1 >/dev/null) || rc=$?
if [ "$rc" != 0 ]; then
    if printf '%s' "$probe" | grep -Eqi 'no GPU|not available in this build|without CUDA|no CUDA'; then
        echo "SKIP: dkb run --backend cuda has no GPU here: $(printf '%s' "$probe" | head -1)"
        exit 77
    fi
    fail "dkb run q06 --backend cuda exited $rc: $(printf '%s' "$probe" | head -3 | tr '\n' ' ')"
fi
export DKB_TEST_KEY="sk-test-$$"
QUICK=(--data "$S" --queries q06 --target triton --mode full --seeds 1 --warmup 1 --min-runs 3 --min-seconds 0.05
    --threads 1 --timeout 120 --jobs 1)

fence() { printf 'Here is the file.\n\n```python\n'; cat "$1"; printf '```\n'; }
printf 'import torch\n\ndef full(db, params, env)\n    return {}\n' >"$WORK/syntax.py"
fence "$WORK/syntax.py" >"$WORK/syntax.md"
fence "$WRONG" >"$WORK/wrong.md"
fence "$HONEST" >"$WORK/correct.md"
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
steps = [{"content_file": w + "/syntax.md"}, {"content_file": w + "/wrong.md"}, {"content_file": w + "/correct.md"}]
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
[ "$rc" = 0 ] || fail "dkb optimize --target triton exited $rc: $(cat "$WORK/err")"
pass "dkb optimize --target triton ran 3 rounds in ${elapsed}s"

python3 - "$R" >"$WORK/rounds" <<'PY' || fail "trajectory: $(cat "$WORK/rounds")"
import json, sys
for l in open(sys.argv[1] + "/trajectory.jsonl"):
    r = json.loads(l)
    if r["type"] == "attempt":
        print(r["round"], r["class"], r.get("file", "-"), "|", (r.get("detail") or "")[:200].replace("\n", " "))
PY
cat "$WORK/rounds"
classes=$(awk '{print $1, $2}' "$WORK/rounds")
want=$'1 compile_error\n2 wrong_answer\n3 ok'
[ "$classes" = "$want" ] || fail "classes per round: got '$(tr '\n' ',' <<<"$classes")', want '$(tr '\n' ',' <<<"$want")'"
pass "classes per round: compile_error, wrong_answer, ok"

cmp -s "$R/work/q06.full/r03.s00/cand/q06.full.py" "$HONEST" || fail "round 3's candidate is not the honest q06.full.py"
python3 - "$R" <<'PY' || fail "the evaluations were not on backend cuda, target triton"
import json, sys
for k in ("02", "03"):
    doc = json.load(open(f"{sys.argv[1]}/work/q06.full/r{k}.s00/eval/results.json"))
    cfg = doc["config"]
    assert cfg["backend"] == "cuda", f"round {k}: backend {cfg['backend']}"
    assert cfg.get("target") == "triton", f"round {k}: target {cfg.get('target')}"
    files = [c.get("file", "") for c in doc["candidates"]]
    assert files and all(f.endswith("q06.full.py") for f in files), f"round {k}: files {files}"
PY
pass "candidates written as q06.full.py and evaluated with backend cuda, target triton"

python3 - "$WORK/server.log" <<'PY' || fail "prompt or feedback not in the requests (log: $WORK/server.log)"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
bodies = [r["body"] for r in reqs if isinstance(r.get("body"), dict)]
assert len(bodies) == 3, f"{len(bodies)} requests, expected 3"
first = bodies[0]["messages"][1]["content"]
for want in ("q06.full.py", "Python (PyTorch and Triton on the GPU)", "# Triton target: how this ABI applies",
             "```python", "Hardware context", "compute capability"):
    assert want in first, f"first prompt lacks {want!r}"
fb1, fb2 = bodies[1]["messages"][-1]["content"], bodies[2]["messages"][-1]["content"]
assert "compile_error" in fb1 and "line 3" in fb1, "round 1 feedback lacks the syntax error: " + fb1[:800]
assert "wrong_answer" in fb2 and "seed" in fb2, "round 2 feedback lacks the wrong answer's seed: " + fb2[:800]
print("ok: the first prompt has the Triton ABI and the GPU; the feedback names the error and the failing seed")
PY
"$DKB" report "$R" >"$WORK/report.md" || fail "dkb report exit $?"
grep -q "| fake-coder | triton | q06 | full | ok |" "$WORK/report.md" || fail "dkb report: $(cat "$WORK/report.md")"
pass "report lists q06 under target triton as ok"
