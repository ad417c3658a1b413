# experts_cpu_b.sh: the expert CPU candidates for Q12..Q22
# (src/kernels/cpu/q12.full.c .. q22.full.c) are all verdict ok under
# `dkb eval` at SF 0.1: right on seed 0 and 3 random parameter sets,
# deterministic, no forbidden imports, no failures. Speed is not asserted
# here (a loaded 2-core machine makes it noisy); the per-query speedups are
# printed. Timing is short (--min-runs 2, --min-seconds 0.05).
# The sibling experts_cpu_a.sh covers Q1..Q11.
#
# Environment: KEEP_WORK=1 keeps $WORK (results under $WORK/results).
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
export DKB_CANDIDATE_H="${DKB_CANDIDATE_H:-$ROOT/include/dkb/candidate.h}"
QUERIES=q12,q13,q14,q15,q16,q17,q18,q19,q20,q21,q22
S="$WORK/sf01"
"$DKB" gen --sf 0.1 --out "$S" -q
"$DKB" eval "$ROOT/src/kernels/cpu" --data "$S" --mode full --queries "$QUERIES" --seeds 3 \
    --warmup 1 --min-runs 2 --min-seconds 0.05 --timeout 60 --out "$WORK/results" -q \
    || fail "dkb eval exited $? (harness error)"

# Every row must be ok; a failing row prints its class, the harness's
# detail, the failing seeds' messages (first differing cell) and the start
# of the compile log.
python3 - "$WORK/results/results.json" "$QUERIES" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
want = sys.argv[2].split(",")
rows = {r["query"]: r for r in doc["candidates"] if r["mode"] == "full"}
bad = []
for q in want:
    r = rows.get(q)
    if r is None:
        bad.append(f"{q}: no row in results.json")
        continue
    b, c = r.get("baseline_ms") or {}, r.get("candidate_ms") or {}
    speed = f'{r["raw_speedup"]:.2f}x' if r.get("raw_speedup") else "-"
    print(f'{q} {r["class"]:<16} baseline {b.get("median", 0):9.3f} ms  candidate {c.get("median", 0):9.3f} ms  {speed}')
    if r["class"] != "ok":
        seeds = [f'seed {k["seed"]}: {k["message"]}' for k in r.get("checks", []) if not k["ok"]]
        bad.append(f'{q}: {r["class"]}: {r["detail"]} {"; ".join(seeds)} {r.get("compile_log", "")[:300]}')
if bad:
    print("FAIL: " + "\nFAIL: ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
pass "expert CPU candidates $QUERIES: verdict ok at SF 0.1 (seed 0 + 3 random seeds)"
