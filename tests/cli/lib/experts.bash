# experts.bash: check_experts QUERIES: the expert CPU candidates
# src/kernels/cpu/qNN.full.c of the comma-separated QUERIES are all verdict
# ok under `dkb eval` at SF 0.1 and SF 0.001 (seed 0 and 3 random parameter sets,
# deterministic, no forbidden imports). Speed is not asserted (a loaded
# 2-core machine makes it noisy); per-query speedups are printed. A failing
# row prints its class, the harness's detail, the failing seeds' messages
# (first differing cell) and the start of the compile log. Sourced after
# common.bash; results stay under $WORK/results with KEEP_WORK=1.
check_experts() {
    local queries=$1 root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
    export DKB_CANDIDATE_H="${DKB_CANDIDATE_H:-$root/include/dkb/candidate.h}"
    local store="$WORK/sf01"
    "$DKB" gen --sf 0.1 --out "$store" -q
    "$DKB" eval "$root/src/kernels/cpu" --data "$store" --mode full --queries "$queries" --seeds 3 \
        --warmup 1 --min-runs 2 --min-seconds 0.05 --timeout 60 --out "$WORK/results" -q \
        || fail "dkb eval exited $? (harness error)"
    check_results "$WORK/results/results.json" "$queries" || fail "some expert candidates are not ok at SF 0.1"
    pass "expert CPU candidates $queries: verdict ok at SF 0.1 (seed 0 + 3 random seeds)"
    # SF 0.001: dbgen repeats (partkey, suppkey) pairs in partsupp below SF
    # 0.01 (4 suppliers drawn from 10), which a join must count per copy
    local tiny="$WORK/sf0001"
    "$DKB" gen --sf 0.001 --out "$tiny" -q
    "$DKB" eval "$root/src/kernels/cpu" --data "$tiny" --mode full --queries "$queries" --seeds 3 \
        --warmup 1 --min-runs 2 --min-seconds 0.02 --timeout 60 --out "$WORK/results-tiny" -q \
        || fail "dkb eval at SF 0.001 exited $? (harness error)"
    check_results "$WORK/results-tiny/results.json" "$queries" || fail "some expert candidates are not ok at SF 0.001"
    pass "expert CPU candidates $queries: verdict ok at SF 0.001"
}

# check_results RESULTS.JSON QUERIES: every query's row is ok (prints them).
check_results() {
    python3 - "$1" "$2" <<'PY'
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
}
