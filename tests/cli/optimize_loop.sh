# optimize_loop.sh: `dkb optimize` end to end against the fake model server
# (tests/tools/fake_model_server.py) on C targets at SF 0.01: scripted
# replies (a 429 and a 500 the client retries, a compile error, a wrong
# answer, a reply with no code block, a truncated reply, a huge reply, then
# a correct candidate) are each classified and the loop recovers and keeps
# the correct one; a reply that never finishes is a model error; a killed
# run resumes; the command backend; --max-wall; no API key in any file it
# writes; `dkb prompt` and `dkb report` (tables and HTML).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/fake_server.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HONEST="$ROOT/tests/candidates/honest/q06.core.c"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q
KEY="sk-test-SECRET-$$-do-not-write"
export DKB_TEST_KEY="$KEY"
QUICK=(--data "$S" --queries q06 --mode core --seeds 1 --warmup 1 --min-runs 3 --min-seconds 0.05 --threads 1 --timeout 60 --jobs 2)

# ---- command line ----
expect_fail 2 "optimize: missing --model NAME" -- "$DKB" optimize --data "$S"
expect_fail 2 "optimize: missing --data STORE" -- "$DKB" optimize --model m
expect_fail 2 "--target gpu: expected c, cuda, python or triton" -- "$DKB" optimize --model m --data "$S" --target gpu
expect_fail 2 "--context disk: expected workload" -- "$DKB" optimize --model m --data "$S" --context disk
expect_fail 2 "--rounds 0: expected an integer" -- "$DKB" optimize --model m --data "$S" --rounds 0
expect_fail 2 "--gpus 0: expected an integer" -- "$DKB" optimize --model m --data "$S" --gpus 0
expect_fail 1 "--gpus: GPU targets only" -- "$DKB" optimize --model m --data "$S" --gpus 2 --out "$WORK/gpus-c"
[ ! -e "$WORK/gpus-c" ] || fail "--gpus with target c wrote $WORK/gpus-c"
expect_fail 2 "optimize: missing --model NAME" -- "$DKB" optimize --model "" --data "$S"
expect_fail 2 "--model-cmd and --base-url exclude each other" -- "$DKB" optimize --model m --data "$S" --model-cmd cat --base-url http://127.0.0.1:9/v1
expect_fail 2 "--max-cost needs --price-in" -- "$DKB" optimize --model m --data "$S" --max-cost 1
expect_fail 2 "unknown query 'q23'" -- "$DKB" optimize --model m --data "$S" --queries q23
expect_fail 2 "prompt: unknown query 'q99'" -- "$DKB" prompt q99 --data "$S"
expect_fail 2 "report: missing RUNDIR" -- "$DKB" report
expect_fail 1 "dkb report: error: .*nothere: not a dkb optimize run directory" -- "$DKB" report "$WORK/nothere"
help=$("$DKB" optimize --help) && grep -q "^usage: dkb optimize" <<<"$help" || fail "optimize --help"
help=$("$DKB" --help) && grep -q "^  optimize " <<<"$help" || fail "dkb --help lists optimize"
pass "command line"

# ---- dkb prompt: every section, and the ablation switches ----
p=$("$DKB" prompt q06 --data "$S" --mode core)
for want in "### system" "### user" "l_shipdate >= date '1994-01-01'" "static int core(" "dkb_candidate_core" \
    "Workload context" "l_discount between disc_lo and disc_hi: 0\\." "Hardware context" "CPU: " "fenced code block"; do
    grep -q -- "$want" <<<"$p" || fail "prompt lacks '$want'"
done
p=$("$DKB" prompt q06 --data "$S" --mode full --context none)
grep -q "Workload context\|Hardware context" <<<"$p" && fail "--context none still has a context section"
grep -q "static void draw(" <<<"$p" || fail "full mode shows the whole plan"
mkdir -p "$WORK/tpl" && cp "$ROOT"/prompts/*.md "$WORK/tpl/"
echo "{{nosuch}}" >>"$WORK/tpl/system.md"
expect_fail 1 "no value for \{\{nosuch\}\}" -- "$DKB" prompt q06 --data "$S" --templates "$WORK/tpl"
pass "dkb prompt"

# ---- the fake server ----

fence() { printf 'Here is the file.\n\n```c\n'; cat "$1"; printf '```\n'; }
fence "$HONEST" >"$WORK/correct.md"
sed 's/((__int128 \*)revenue->data)\[0\] = total;/((__int128 *)revenue->data)[0] = total + 1;/' "$HONEST" >"$WORK/wrong.c"
grep -q "total + 1" "$WORK/wrong.c" || fail "could not make the wrong candidate"
fence "$WORK/wrong.c" >"$WORK/wrong.md"
printf '```c\n#include "dkb/candidate.h"\nint dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) { return undeclared; }\n```\n' >"$WORK/cerr.md"
printf '```c\n#include "dkb/candidate.h"\nint dkb_candidate_core(const dkb_cand_set *in,\n' >"$WORK/cut.md"
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
steps = [
    {"status": 429, "retry_after": 0},
    {"status": 500},
    {"content_file": w + "/cerr.md"},
    {"content_file": w + "/wrong.md"},
    {"content": "I would rather explain it in words."},
    {"content_file": w + "/cut.md", "finish_reason": "length"},
    {"huge_bytes": 3000000},
    {"content_file": w + "/correct.md"},
]
json.dump({"steps": steps}, open(w + "/script.json", "w"))
PY
start_server "$WORK/script.json"
R="$WORK/run1"
"$DKB" optimize --model fake-coder --base-url "http://127.0.0.1:$PORT/v1" --api-key-env DKB_TEST_KEY \
    --rounds 6 --out "$R" "${QUICK[@]}" >"$WORK/out1" 2>"$WORK/err1" || fail "optimize exit $?: $(cat "$WORK/err1")"
stop_server
classes=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "attempt": print(r["round"], r["class"])' "$R/trajectory.jsonl")
echo "$classes"
want=$'1 compile_error\n2 wrong_answer\n3 no_code\n4 truncated_reply\n5 truncated_reply\n6 ok'
[ "$classes" = "$want" ] || fail "classes per round: got '$classes', want '$want'"
grep -q '"type":"done"' "$R/trajectory.jsonl" || fail "no done record"
# the feedback reached the model: round 2's request holds round 1's compiler diagnostics, round 3's the wrong answer's seed
python3 - "$WORK/server.log" <<'PY' || fail "feedback not in the requests"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
bodies = [r["body"] for r in reqs if isinstance(r.get("body"), dict)]
last_user = [b["messages"][-1]["content"] for b in bodies]
assert any("compile_error" in u and "undeclared" in u for u in last_user), "no compile feedback"
assert any("wrong_answer" in u and "seed" in u for u in last_user), "no wrong-answer feedback"
assert any("no_code" in u for u in last_user), "no no-code feedback"
assert all(r["authorization"] == "present" for r in reqs), "key not sent"
PY
grep -q "| fake-coder | c | core | 1 | 100.0%" "$WORK/out1" || fail "summary table: $(cat "$WORK/out1")"
pass "scripted replies classified, loop recovered: $(tr '\n' ' ' <<<"$classes")"

# ---- a reply that never finishes: a model error, the loop goes on and says so ----
echo '{"steps": [{"hang": "dribble", "hang_s": 30}]}' >"$WORK/hang.json"
start_server "$WORK/hang.json"
"$DKB" optimize --model fake-coder --base-url "http://127.0.0.1:$PORT/v1" --api-key-env DKB_TEST_KEY \
    --request-timeout 2 --rounds 1 --max-wall 20 --out "$WORK/run2" "${QUICK[@]}" >"$WORK/out2" 2>"$WORK/err2" \
    || fail "hang run exit $?: $(cat "$WORK/err2")"
stop_server
grep -q '"class":"model_error"' "$WORK/run2/trajectory.jsonl" || fail "hang not a model_error"
pass "a reply that never finishes is a model error"

# ---- a 401 stops the asking (exit 1, no query marked done); the same command resumes once the key is right ----
echo '{"steps": [{"status": 401, "message": "Incorrect API key provided"}]}' >"$WORK/s401.json"
start_server "$WORK/s401.json"
R5="$WORK/run5"
set +e
"$DKB" optimize --model fake-coder --base-url "http://127.0.0.1:$PORT/v1" --api-key-env DKB_TEST_KEY \
    --rounds 2 --out "$R5" "${QUICK[@]}" >/dev/null 2>"$WORK/err5"
rc=$?
set -e
stop_server
[ "$rc" = 1 ] || fail "401 run: exit $rc, want 1: $(cat "$WORK/err5")"
grep -q "stopped asking: the model endpoint is unusable: .*HTTP 401: Incorrect API key provided" "$WORK/err5" || fail "401 message: $(cat "$WORK/err5")"
[ "$(grep -c '"type":"attempt"' "$R5/trajectory.jsonl")" = 1 ] || fail "401 run asked more than once"
grep -q '"type":"done"' "$R5/trajectory.jsonl" && fail "401 run marked a query done"
echo '{"steps": [{"content": "no code, sorry"}]}' >"$WORK/s200.json"
start_server "$WORK/s200.json"
"$DKB" optimize --model fake-coder --base-url "http://127.0.0.1:$PORT/v1" --api-key-env DKB_TEST_KEY \
    --rounds 2 --out "$R5" "${QUICK[@]}" >/dev/null 2>"$WORK/err5" || fail "resume after 401: exit $?: $(cat "$WORK/err5")"
stop_server
got=$(python3 -c '
import json, sys
print(" ".join("%s:%s" % (r["round"], r["class"]) for r in map(json.loads, open(sys.argv[1])) if r["type"] == "attempt"))' "$R5/trajectory.jsonl")
[ "$got" = "1:model_error 1:no_code 2:no_code" ] || fail "after the 401 and resume: '$got'"
expect_fail 1 "holds a run with another model .'fake-coder', now 'other'." -- "$DKB" optimize --model other \
    --base-url "http://127.0.0.1:$PORT/v1" --rounds 2 --out "$R5" "${QUICK[@]}"
pass "a 401 stops the asking with exit 1; resumed: $got"

# ---- kill and resume ----
echo "{\"steps\": [{\"content_file\": \"$WORK/wrong.md\", \"delay_s\": 0.5}], \"cycle\": true}" >"$WORK/slow.json"
start_server "$WORK/slow.json"
R3="$WORK/run3"
"$DKB" optimize --model fake-coder --base-url "http://127.0.0.1:$PORT/v1" --api-key-env DKB_TEST_KEY \
    --rounds 3 --out "$R3" "${QUICK[@]}" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q '"type":"attempt"' "$R3/trajectory.jsonl" 2>/dev/null && break; sleep 0.1; done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
n1=$(grep -c '"type":"attempt"' "$R3/trajectory.jsonl")
grep -q '"type":"done"' "$R3/trajectory.jsonl" && fail "killed run already done (kill came too late)"
"$DKB" optimize --model fake-coder --base-url "http://127.0.0.1:$PORT/v1" --api-key-env DKB_TEST_KEY \
    --rounds 3 --out "$R3" "${QUICK[@]}" >/dev/null 2>"$WORK/err3" || fail "resume exit $?: $(cat "$WORK/err3")"
stop_server
rounds=$(python3 -c '
import json, sys
print(" ".join(str(json.loads(l)["round"]) for l in open(sys.argv[1]) if l.strip() and json.loads(l)["type"] == "attempt"))' "$R3/trajectory.jsonl")
[ "$rounds" = "1 2 3" ] || fail "after resume the rounds are '$rounds' (had $n1 before the kill)"
pass "killed after $n1 attempt(s), resumed: rounds $rounds"

# ---- the command backend ----
cat >"$WORK/model.sh" <<SH
#!/bin/sh
cat >"$WORK/cmd_stdin.txt"
printf 'Sure.\n\n\`\`\`c\n'
cat "$HONEST"
printf '\`\`\`\n'
SH
chmod +x "$WORK/model.sh"
"$DKB" optimize --model scripted --model-cmd "$WORK/model.sh" --rounds 1 --out "$WORK/run4" "${QUICK[@]}" \
    >"$WORK/out4" 2>"$WORK/err4" || fail "command backend exit $?: $(cat "$WORK/err4")"
grep -q '^### user' "$WORK/cmd_stdin.txt" || fail "command got no conversation"
grep -q '"class":"ok"' "$WORK/run4/trajectory.jsonl" || fail "command backend candidate not ok"
pass "command backend"

# ---- no key in any file written ----
if grep -rl -- "$KEY" "$R" "$WORK/run2" "$R3" "$WORK/run4" "$R5" "$WORK/server.log"; then fail "the API key was written"; fi
pass "no API key in the run directories or the server log"

# ---- dkb report ----
"$DKB" report "$R" "$WORK/run4" --html "$WORK/report.html" >"$WORK/report.md" || fail "report exit $?"
grep -q "| fake-coder | c | core |" "$WORK/report.md" || fail "report table: $(cat "$WORK/report.md")"
grep -q "| scripted | c | core |" "$WORK/report.md" || fail "report table (2 runs)"
grep -q "<svg" "$WORK/report.html" || fail "no SVG chart"
grep -qi "https\?://" "$WORK/report.html" | grep -v "www.w3.org" && fail "the HTML refers to the network"
pass "dkb report: tables and HTML"

# ---- dkb report: a failed report leaves an older --html in place; odd run directories ----
echo "older report" >"$WORK/keep.html"
expect_fail 1 "nothere: not a dkb optimize run directory" -- "$DKB" report "$WORK/nothere" --html "$WORK/keep.html"
[ "$(cat "$WORK/keep.html")" = "older report" ] || fail "a failed report overwrote --html"
ls "$WORK" | grep -q "keep.html.tmp" && fail "a failed report left a temporary file"
expect_fail 1 "--html .*: is a directory" -- "$DKB" report "$R" --html "$WORK"
expect_fail 1 "cannot create the HTML report" -- "$DKB" report "$R" --html "$WORK/no/such/dir/r.html"
mkdir -p "$WORK/odd run"
printf '[1]' >"$WORK/odd run/run.json"
expect_fail 1 "run.json: not a JSON object" -- "$DKB" report "$WORK/odd run"
printf '{"model":"m<b>|x","target":"c<i>"}\n' >"$WORK/odd run/run.json"
{
    echo '{"type":"attempt","query":"q01","mode":"core","round":1,"valid":true,"raw_speedup":2,"baseline_ms":2,"candidate_ms":1,"class":"ok"}'
    echo 'not json'
    echo '{"type":"attempt"}'
    echo '{"type":"attempt","query":"q06","mode":"full","round":1e300,"valid":false,"class":"<script>x</script>","baseline_ms":1}'
} >"$WORK/odd run/trajectory.jsonl"
"$DKB" report "$WORK/odd run" --html "$WORK/odd run/r.html" >"$WORK/odd.md" 2>"$WORK/odd.err" || fail "odd report exit $?"
grep -q "1 unreadable line left out" "$WORK/odd.err" || fail "no note on the unreadable line: $(cat "$WORK/odd.err")"
[ "$(grep -c '^| m<b>\\|x | c<i> | q' "$WORK/odd.md")" = 2 ] || fail "odd report rows: $(cat "$WORK/odd.md")"
grep -q "| q06 | full | <script>x</script> | 1.000 | - | 1.00x | 0 |" "$WORK/odd.md" || fail "odd round: $(cat "$WORK/odd.md")"
grep -q "<script" "$WORK/odd run/r.html" && fail "report HTML does not escape the class"
grep -q "<td>c&lt;i&gt;</td>" "$WORK/odd run/r.html" || fail "report HTML does not escape the target"
pass "dkb report: atomic --html, run.json not an object, corrupt trajectory lines, escaping"

# ---- dkb prompt on a slice store: one error line (its row counts would describe a third of the data) ----
"$DKB" gen --sf 0.01 --part 2 --parts 3 --out "$WORK/slice" -q
expect_fail 1 "dkb prompt: error: store .*slice holds slice 2 of 3" -- "$DKB" prompt q06 --data "$WORK/slice"
