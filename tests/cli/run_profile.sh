# run_profile.sh: `dkb run --profile` times every TensorPlan operation of one
# more run and prints them longest first: one line per query in table mode
# (ops named, calls counted, shares that add up to at most the run), the same
# in JSON, and the line on stderr in CSV mode so the CSV stays pure.
source "$(dirname "$0")/lib/common.bash"

S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q

out=$("$DKB" run q03 --data "$S" --profile)
line=$(printf '%s\n' "$out" | grep '^q03 profile: ') || fail "no profile line: $out"
for op in join topk column; do
    printf '%s' "$line" | grep -Eq " $op [0-9.]+ ms x[0-9]+ \(" || fail "profile line lacks $op: $line"
done
pass "table: $line"

"$DKB" run q03 --data "$S" --profile --format json >"$WORK/p.json"
python3 - "$WORK/p.json" <<'PY' || fail "JSON profile is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["profile"]
ops = p["ops"]
assert ops, "no ops"
assert all(o["calls"] >= 1 and o["ms"] >= 0 for o in ops)
assert [o["ms"] for o in ops] == sorted((o["ms"] for o in ops), reverse=True), "not longest first"
assert sum(o["ms"] for o in ops) <= p["ms"] * 1.01 + 0.01, "ops take longer than the run"
assert {"join", "topk"} <= {o["op"] for o in ops}
PY
pass "json: ops sorted, within the run's time"

"$DKB" run q06 --data "$S" --profile --format csv >"$WORK/p.csv" 2>"$WORK/p.err"
grep -q '^q06 profile: ' "$WORK/p.err" || fail "csv mode: no profile line on stderr"
! grep -q 'profile' "$WORK/p.csv" || fail "csv mode: profile line in the CSV"
pass "csv: the profile goes to stderr"

# ---- a missing or bad value: one error line, exit 2 ----
expect_fail 2 "run: option --bandwidth needs a value" -- "$DKB" run q06 --data "$S" --bandwidth
expect_fail 2 "run: unknown option --frobnicate" -- "$DKB" run q06 --data "$S" --frobnicate
expect_fail 2 "--bandwidth 0: expected GB/s above 0" -- "$DKB" run q06 --data "$S" --bandwidth 0
