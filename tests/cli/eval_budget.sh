# eval_budget.sh: `dkb eval / bench / prompt --mem-budget`: full-mode
# candidates under a memory budget (candidate.h, "full mode under a memory
# budget"; docs/harness.md, "Candidates under a memory budget").
#
# On an SF 0.01 store of 8 partitions:
#   - the budget corpus (tests/candidates/budget/CASE, each with EXPECTED):
#     an honest streaming Q6 and the cases against the loader (a load over
#     load_limit, loads never released, a released load read again, a write
#     into a load, rows past a load read, the hidden columns read, bad loader
#     arguments, no DKB_CANDIDATE_STREAMS, what earlier calls left in the
#     loader looked for) under a budget that streams
#     lineitem, each classified as EXPECTED; the honest one's loads total
#     the baseline's streamed bytes;
#   - Harness II cases (tests/candidates/adversarial) still classified with
#     the budget path on (a budget the queries fit: nothing streams), and
#     the candidate without the marker then runs (ok);
#   - CPU experts (q01, q03, q06, q09, q14, q19: lineitem, and lineitem
#     with orders; q02: part and partsupp) pass under the budget with their
#     loads recorded;
#   - bad input: a budget too small (one line naming the query and what it
#     needs, exit 1, nothing evaluated), a store of one partition, core
#     mode, Python, a bad size (exit 2; the CUDA backend streams too:
#     tests/cli/eval_budget_cuda.sh);
#   - dkb bench --mem-budget prints and records the bytes streamed per
#     query; dkb prompt --mem-budget describes the partitioned ABI, and
#     dkb optimize --mem-budget sends it and judges the reply under the budget.
# The whole corpus runs under a budget by hand with
# MEM_BUDGET=1G tests/cli/eval_corpus.sh (full-mode rows).
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CAND="$ROOT/tests/candidates"
S="$WORK/sf001p8"
S1="$WORK/sf001p1"
"$DKB" gen --sf 0.01 --partitions 8 --out "$S" -q
"$DKB" gen --sf 0.01 --out "$S1" -q

check_results() {
    python3 "$(dirname "$0")/lib/corpus_results.py" "$@" .full.c
}

failures=0
# eval_case NAME DIR EXPECTED [dkb eval options...]
eval_case() {
    local name=$1 dir=$2 expected=$3
    shift 3
    local out="$WORK/results/$name" rc=0
    "$DKB" eval "$dir" --data "$S" --out "$out" --seeds 3 --min-seconds 0.2 --mem-limit 1 --threads 1 -q "$@" \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: dkb eval $name exited $rc: $(tail -3 "$WORK/$name.stderr")" >&2
        failures=$((failures + 1))
        return
    fi
    check_results "$out/results.json" "$expected" "$dir" || failures=$((failures + 1))
}

# ---- the budget corpus, lineitem streamed (512K: 4 runs of the baseline) ----
for c in $(cd "$CAND/budget" && ls); do
    eval_case "budget-$c" "$CAND/budget/$c" "$(cat "$CAND/budget/$c/EXPECTED")" --mem-budget 512K
done
python3 - "$WORK/results/budget-honest/results.json" <<'PY' || fail "the honest streaming Q6's streamed bytes"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["config"]["mem_budget"] == 512 * 1024, doc["config"]
st = doc["candidates"][0]["streamed"]
assert st["partitioned"] and st["chunks"] >= 4, st
assert st["candidate_bytes"] == st["baseline_bytes"] > 0, st
PY
pass "the honest streaming Q6 loaded exactly the baseline's streamed bytes"
grep -q 'the loader: load of partitions 0..7' "$WORK/results/budget-over_budget/results.json" ||
    fail "over_budget: the row does not name the loader's refusal"
grep -q 'read a partition it had released' "$WORK/results/budget-keeps_released/results.json" ||
    fail "keeps_released: the crash does not name the released partition"

# ---- Harness II with the budget path on (everything fits: nothing streams) ----
for c in static_cache_keyed heap_freed_cache writes_input wrong_answer hardcoded_seed0 uninitialized_output; do
    eval_case "fits-$c" "$CAND/adversarial/$c" "$(cat "$CAND/adversarial/$c/EXPECTED")" --mem-budget 1G
done
eval_case fits-no_marker "$CAND/budget/no_marker" ok --mem-budget 1G

# ---- the CPU experts that stream, and one that does not ----
X="$WORK/experts"
mkdir -p "$X"
cp "$ROOT"/src/kernels/cpu/q0{1,3,6,9}.full.c "$ROOT"/src/kernels/cpu/q1{4,9}.full.c "$ROOT"/src/kernels/cpu/q02.full.c "$X/"
"$DKB" eval "$X" --data "$S" --out "$WORK/results/experts" --queries q01,q03,q06,q09,q14,q19 --seeds 3 \
    --min-seconds 0.1 --mem-budget 768K -q \
    >"$WORK/experts.stdout" 2>"$WORK/experts.stderr" || fail "dkb eval experts: $(tail -3 "$WORK/experts.stderr")"
python3 - "$WORK/results/experts/results.json" <<'PY' || failures=$((failures + 1))
import json, sys
rows = {r["query"]: r for r in json.load(open(sys.argv[1]))["candidates"]}
bad = []
for q in ("q01", "q03", "q06", "q09", "q14", "q19"):
    r = rows[q]
    st = r.get("streamed") or {}
    if r["class"] != "ok" or not st.get("partitioned") or not st.get("candidate_bytes"):
        bad.append(f"{q}: {r['class']} {r['detail']} {st}")
for b in bad:
    print("FAIL: experts under --mem-budget 768K:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
pass "experts q01 q03 q06 q09 q14 q19 ok under --mem-budget 768K (loads recorded)"
# q02 streams partsupp and part under 64K (its columns take more)
"$DKB" eval "$X" --data "$S" --out "$WORK/results/q02" --queries q02 --seeds 3 --min-seconds 0.1 --mem-budget 64K -q \
    >"$WORK/q02.stdout" 2>"$WORK/q02.stderr" || fail "dkb eval q02: $(tail -3 "$WORK/q02.stderr")"
python3 - "$WORK/results/q02/results.json" <<'PY' || fail "q02 under --mem-budget 64K: not ok, streamed"
import json, sys
r = json.load(open(sys.argv[1]))["candidates"][0]
st = r["streamed"]
assert r["class"] == "ok" and st["partitioned"] and st["candidate_bytes"] > 0, r
PY
pass "expert q02 under --mem-budget 64K: ok, part and partsupp streamed"

# ---- bad input ----
H="$CAND/budget/honest"
expect_fail 1 "q06: --mem-budget 100.0K is too small: it needs at least .* \(.*largest partition of lineitem" -- \
    "$DKB" eval "$H" --data "$S" --out "$WORK/results/small" --mem-budget 100K -q
[ ! -e "$WORK/results/small/results.json" ] || fail "a budget too small still wrote results.json"
expect_fail 1 "q06: not partitioned: .*--partitions P" -- \
    "$DKB" eval "$H" --data "$S1" --out "$WORK/results/p1" --mem-budget 512K -q
expect_fail 2 "--mem-budget: full mode only" -- "$DKB" eval "$H" --data "$S" --mem-budget 1M --mode core
expect_fail 2 "--mem-budget: full mode only" -- "$DKB" eval "$H" --data "$S" --mem-budget 1M --mode all
expect_fail 2 "--mem-budget: not with --target python" -- "$DKB" eval "$H" --data "$S" --mem-budget 1M --target python
expect_fail 2 "--mem-budget" -- "$DKB" eval "$H" --data "$S" --mem-budget 12Q
expect_fail 2 "--mem-budget" -- "$DKB" bench --data "$S" --mem-budget 0
expect_fail 2 "--mem-budget: --mode full" -- "$DKB" prompt q06 --data "$S" --mem-budget 1M --mode core
expect_fail 2 "--mem-budget: full mode only" -- "$DKB" optimize --model m --model-cmd cat --data "$S" --mem-budget 1M --mode core

# ---- dkb bench --mem-budget: the bytes streamed per query ----
"$DKB" bench --backend cpu --data "$S" --experts "$X" --queries q02,q06 --seeds 1 --quick --mem-budget 512K \
    --out "$WORK/bench" -q >"$WORK/bench.stdout" 2>"$WORK/bench.stderr" || fail "dkb bench: $(tail -3 "$WORK/bench.stderr")"
grep -q "streamed under --mem-budget 524288 bytes" "$WORK/bench.stdout" || fail "bench: no streamed table"
grep -Eq "^q06 +[0-9]+ runs +[0-9]+ +[0-9]+$" "$WORK/bench.stdout" || fail "bench: no q06 streamed row: $(cat "$WORK/bench.stdout")"
python3 - "$WORK/bench/results.json" <<'PY' || fail "bench results.json: streamed bytes"
import json, sys
qs = {r["query"]: r for r in json.load(open(sys.argv[1]))["bench"]["queries"]}
assert qs["q06"]["partitioned"] and qs["q06"]["expert_streamed_bytes"] == qs["q06"]["baseline_streamed_bytes"] > 0, qs["q06"]
# q02's columns fit 512K: nothing streams, the expert runs whole
assert not qs["q02"]["partitioned"] and qs["q02"]["baseline_streamed_bytes"] == 0 == qs["q02"]["expert_streamed_bytes"], qs["q02"]
PY
pass "dkb bench --mem-budget: bytes streamed per query (table and results.json)"

# ---- dkb prompt --mem-budget ----
"$DKB" prompt q06 --data "$S" --mode full --mem-budget 512K --context none >"$WORK/prompt.txt"
grep -q "^## Memory budget" "$WORK/prompt.txt" || fail "prompt: no budget section"
grep -q "lineitem streams by partition, 8 partitions" "$WORK/prompt.txt" || fail "prompt: streamed tables not named"
grep -q "DKB_CANDIDATE_STREAMS" "$WORK/prompt.txt" || fail "prompt: the marker is not named"
grep -q "optional: dkb/cand_stream.h" "$WORK/prompt.txt" || fail "prompt: cand_stream.h not shown"
"$DKB" prompt q06 --data "$S" --mode full --mem-budget 1G --context none >"$WORK/prompt-fits.txt"
grep -q "fit it: .env->budget. is set with .nstreamed == 0." "$WORK/prompt-fits.txt" || fail "prompt: a budget that fits"
"$DKB" prompt q06 --data "$S" --mode full --context none >"$WORK/prompt-none.txt"
! grep -q "^## Memory budget" "$WORK/prompt-none.txt" || fail "prompt: a budget section without --mem-budget"
pass "dkb prompt --mem-budget describes the budget, the loader and the marker"

# ---- dkb optimize --mem-budget: the prompt the model gets, the evaluation under the budget ----
{ printf '```c\n'; cat "$H/q06.full.c"; printf '```\n'; } >"$WORK/reply.md"
"$DKB" optimize --model fake --model-cmd "cat >'$WORK/conversation.txt'; cat '$WORK/reply.md'" --data "$S" \
    --queries q06 --rounds 1 --seeds 1 --min-seconds 0.1 --mem-budget 512K --out "$WORK/opt" -q \
    >"$WORK/opt.stdout" 2>"$WORK/opt.stderr" || fail "dkb optimize: $(tail -3 "$WORK/opt.stderr")"
grep -q "^## Memory budget" "$WORK/conversation.txt" || fail "optimize: the model's prompt has no budget section"
python3 - "$WORK/opt/trajectory.jsonl" <<'PY' || fail "optimize: the attempt is not ok under the budget"
import json, sys
att = [e for e in map(json.loads, open(sys.argv[1])) if e.get("type") == "attempt"]
assert len(att) == 1 and att[0]["class"] == "ok", [(a.get("class"), a.get("detail")) for a in att]
PY
pass "dkb optimize --mem-budget: the budget in the prompt, the streaming reply judged ok under the budget"

[ "$failures" = 0 ] || fail "$failures case(s) misclassified (KEEP_WORK=1 keeps $WORK)"
pass "candidates under a memory budget classified as expected"
