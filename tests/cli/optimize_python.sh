# optimize_python.sh: `dkb optimize --target python` and `dkb prompt --target
# python|triton` (issue 19, the repair loop for Python candidates) against
# the fake model server at SF 0.01: the prompt shows candidate.py, the
# Python entry point and a python fence (triton: the GPU notes, and on a
# machine without a GPU a hardware section that says so); scripted replies
# (a C block only: no_code, naming Python; a Python syntax error; a wrong
# answer; then the honest Q6) are classified, the loop keeps the correct one
# and `dkb report` lists the run under target python; --target triton (without a GPU) and
# --target python with --sql are refused before anything is asked.
# Exits 77 (skipped) only when the harness's python3 cannot import torch and
# numpy, as python_corpus.sh (CI installs python3-torch).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/fake_server.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HONEST="$ROOT/tests/candidates/python/honest/q06.full.py"
PY="${DKB_PYTHON:-}"
[ -n "$PY" ] || { [ -x /usr/bin/python3 ] && PY=/usr/bin/python3; } || PY=python3
if ! "$PY" -c "import torch, numpy" 2>/dev/null; then
    echo "SKIP: $PY cannot import torch and numpy (install python3-torch python3-numpy)"
    exit 77
fi
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q
export DKB_TEST_KEY="sk-test-$$"
QUICK=(--data "$S" --queries q06 --mode full --seeds 1 --warmup 1 --min-runs 3 --min-seconds 0.05 --threads 1 --timeout 120 --jobs 1)

# ---- command line ----
expect_fail 2 "--target fortran: expected c, cuda, python or triton" -- "$DKB" optimize --model m --data "$S" --target fortran
expect_fail 2 "--target rust: expected c, cuda, python or triton" -- "$DKB" prompt q06 --data "$S" --target rust
if ! nvidia-smi -L >/dev/null 2>&1; then   # with a GPU: optimize_triton.sh runs the loop
    expect_fail 1 "--target triton: no usable GPU .*; nothing was asked or evaluated" -- \
        "$DKB" optimize --model m --data "$S" --target triton --out "$WORK/tri"
    [ -e "$WORK/tri" ] && fail "--target triton wrote its run directory"
fi
echo "select 1 as one;" >"$WORK/one.sql"
expect_fail 1 "--target python: not with a SQL task \(--sql\) yet" -- \
    "$DKB" optimize --model m --data "$S" --target python --sql "$WORK/one.sql" --mode full --out "$WORK/sqlpy"
pass "command line"

# ---- dkb prompt ----
p=$("$DKB" prompt q06 --data "$S" --target python --mode full)
for want in "Python (PyTorch on the CPU)" 'Write `q06.full.py`' 'defines `full` as declared in `dkb/candidate.py`' \
    "## The candidate ABI: include/dkb/candidate.py" '```python' "def full(db, params, env):" "raise an exception" \
    "Runtime: CPython with torch on the CPU" "CPU: "; do
    grep -qF -- "$want" <<<"$p" || fail "python prompt lacks '$want'"
done
grep -qF "DKB_CAND_EINVAL" <<<"$p" && fail "the python prompt speaks of candidate.h's return codes"
grep -qF "cand_util.h" <<<"$p" && fail "the python prompt shows the C toolkit"
p=$("$DKB" prompt q06 --data "$S" --target python --mode core)
grep -qF 'defines `core` as declared in `dkb/candidate.py`' <<<"$p" || fail "python core prompt: entry"
grep -qF "def core(inputs, outputs, env):" <<<"$p" || fail "python core prompt: ABI"
p=$("$DKB" prompt q06 --data "$S" --target triton --mode full)
for want in "Python (PyTorch and Triton on the GPU)" "# Triton target: how this ABI applies" 'Write `q06.full.py`' '```python'; do
    grep -qF -- "$want" <<<"$p" || fail "triton prompt lacks '$want'"
done
if ! nvidia-smi -L >/dev/null 2>&1; then
    grep -qF "GPU: none found where this prompt was made" <<<"$p" || fail "triton prompt without a GPU: hardware section"
    grep -qF "dkb optimize --target triton describes the GPU" <<<"$p" || fail "triton prompt: names its target"
fi
p=$("$DKB" prompt q06 --data "$S" --mode full)
grep -qF 'defines `dkb_candidate_full` as declared in `dkb/candidate.h`' <<<"$p" || fail "the C prompt changed its entry line"
grep -qF "DKB_CAND_EINVAL" <<<"$p" || fail "the C prompt lost candidate.h's return codes"
pass "dkb prompt --target python, triton (and c unchanged)"

# ---- the loop against the fake server ----

fence() { printf 'Here is the module.\n\n```%s\n' "$1"; cat "$2"; printf '```\n'; }
fence python "$HONEST" >"$WORK/correct.md"
sed 's/return {"revenue": revenue.reshape(1)}/return {"revenue": (revenue + 1).reshape(1)}/' "$HONEST" >"$WORK/wrong.py"
grep -q "revenue + 1" "$WORK/wrong.py" || fail "could not make the wrong candidate"
fence py "$WORK/wrong.py" >"$WORK/wrong.md"
printf 'In C:\n\n```c\nint dkb_candidate_full(void) { return 0; }\n```\n' >"$WORK/cblock.md"
printf '```python\ndef full(db, params, env)\n    return None\n```\n' >"$WORK/syntax.md"
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
steps = [{"content_file": w + "/" + f} for f in ("cblock.md", "syntax.md", "wrong.md", "correct.md")]
json.dump({"steps": steps}, open(w + "/script.json", "w"))
PY
start_server "$WORK/script.json"
R="$WORK/run"
"$DKB" optimize --model fake-coder --base-url "http://127.0.0.1:$PORT/v1" --api-key-env DKB_TEST_KEY \
    --target python --rounds 4 --out "$R" "${QUICK[@]}" >"$WORK/out" 2>"$WORK/err" || fail "optimize exit $?: $(cat "$WORK/err")"
stop_server
classes=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "attempt": print(r["round"], r["class"], r.get("file") or "-")' "$R/trajectory.jsonl")
echo "$classes"
want=$'1 no_code -\n2 compile_error work/q06.full/r02.s00/cand/q06.full.py\n3 wrong_answer work/q06.full/r03.s00/cand/q06.full.py\n4 ok work/q06.full/r04.s00/cand/q06.full.py'
[ "$classes" = "$want" ] || fail "classes per round: got '$classes', want '$want'"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["target"] == "python"' "$R/run.json" || fail "run.json: target"
python3 - "$WORK/server.log" <<'PY' || fail "feedback not in the requests"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
users = [r["body"]["messages"][-1]["content"] for r in reqs if isinstance(r.get("body"), dict)]
assert any("no fenced code block in Python (1 in other languages, e.g. 'c')" in u for u in users), "no-code feedback"
assert any("wrong_answer" in u and "seed" in u for u in users), "wrong-answer feedback"
assert "candidate.py" in reqs[0]["body"]["messages"][-1]["content"], "first prompt without candidate.py"
PY
grep -q "| fake-coder | python | full | 1 | 100.0%" "$WORK/out" || fail "summary table: $(cat "$WORK/out")"
pass "scripted Python replies classified, the honest one kept: $(cut -d' ' -f1,2 <<<"$classes" | tr '\n' ' ')"

"$DKB" report "$R" >"$WORK/report.md" || fail "report exit $?"
grep -q "| fake-coder | python | full |" "$WORK/report.md" || fail "report table: $(cat "$WORK/report.md")"
pass "dkb report lists the python target"
