# eval_budget_cuda.sh: `dkb eval / bench --backend cuda --mem-budget`: full-
# mode CUDA candidates under a memory budget, the streamed tables' rows
# coming through env->budget->load as device memory (candidate.h, "full
# mode under a memory budget", "On CUDA"; src/harness/worker_stream_cuda.c).
# The CUDA counterpart of eval_budget.sh. Exits 77 (skipped) when dkb
# reports no usable GPU or a build without CUDA. Passes on the H200
# (2026-12-04, bench/device_budget.sh tests: 87-92 s).
#
# 1. On an SF 0.01 store of 8 partitions, under --mem-budget 512K
#    (load_limit 512K: a partition of Q6's four lineitem columns is about
#    210K, so two are held at once, not three), the CUDA budget corpus
#    (tests/candidates/budget_cuda/CASE/q06.full.cu, each with EXPECTED):
#      honest            ok; its loads total the baseline's streamed bytes
#      keeps_released    wrong_answer (partition 0 read through device
#                        addresses kept past its release: 0xa5 bytes)
#      over_budget       returned_error, the detail naming the loader's
#                        refusal of partitions 0..7
#      no_marker         bad_entry ("does not stream"); ok under 1G (fits)
#      hoards_loads      returned_error (the third load held is past
#                        load_limit)
#      leaves_in_region  ok (a record left in the loader's device memory
#                        past a load's rows is overwritten after the call)
#      bad_args          ok (every bad loader call refused)
#      finds_streamed    ok (it searches the device for partition 0's
#                        l_shipdate outside its loads and finds nothing;
#                        not run on a GPU yet)
#    and the honest one again under 1G (the query fits: one pass over db's
#    whole device columns, which the worker loaded itself). Under both
#    budgets the job files hand the worker no IPC handle to lineitem,
#    orders, part or partsupp (the tables a query may stream).
# 2. The 22 CUDA experts (src/kernels/cuda) on an SF 0.1 store of 8
#    partitions under --mem-budget 8M, seed 0 + 2: every row ok, and every
#    query that streamed has its loads recorded. 8M was chosen from the
#    sizes `dkb run QNN --backend cuda --mem-budget 1` reports (checked
#    here before the evaluation, for all 22): it holds every query's
#    resident tables + 2 x its largest partition (the tightest is q09:
#    resident 2,182,682 + 2 x 2,877,864 = 7,938,410 bytes on the CPU's
#    count, a little more with CUDA's 256-byte pieces, of 8,388,608), so
#    the baseline streams through two device buffers and an expert's
#    DKB_STREAM_OVERLAP walk holds two loads; and every query that reads
#    lineitem needs more than 8M for its columns (the least, q04, streams
#    8,556,864 bytes), so each streams lineitem in at least 2 runs (checked
#    from results.json's "chunks"); q02, q11, q16 and q22 fit. (The CPU
#    backend's counts at 8M: 2 to 4 runs per pass.)
# 3. dkb bench --backend cuda --mem-budget 8M on that store (q01, q06, q09,
#    and q22, which fits): the streamed table with its "floor ms" columns
#    and the measured pinned bandwidth; results.json's pinned_h2d_gbs and
#    each streamed query's expert_transfer_floor_ms.
# PARTS="corpus" (or any of corpus, experts, bench) runs only those parts.
# Failures print the row, its verdict and its detail. Keep the work
# directory with KEEP_WORK=1.
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CAND="$ROOT/tests/candidates/budget_cuda"
S="$WORK/sf001p8"
"$DKB" gen --sf 0.01 --partitions 8 --out "$S" -q || fail "dkb gen --sf 0.01 --partitions 8 failed"

# Is there a GPU? (an empty candidate directory: the store loaded onto it, nothing evaluated)
skip_without_cuda_eval "$S"

failures=0
# eval_case NAME DIR EXPECTED [dkb eval options...]
eval_case() {
    local name=$1 dir=$2 expected=$3
    shift 3
    local out="$WORK/results/$name" rc=0
    "$DKB" eval "$dir" --data "$S" --backend cuda --out "$out" --seeds 3 --min-seconds 0.2 -q "$@" \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: dkb eval $name ($*) exited $rc: $(tail -3 "$WORK/$name.stderr" | tr '\n' ' ')" >&2
        failures=$((failures + 1))
        return
    fi
    python3 "$(dirname "$0")/lib/corpus_results.py" "$out/results.json" "$expected" "$dir" .cu ||
        failures=$((failures + 1))
}

# detail_has NAME REGEX WHAT: every row of results/NAME has a detail matching REGEX (Python re)
detail_has() {
    python3 - "$WORK/results/$1/results.json" "$2" "$1" "$3" <<'PY' || failures=$((failures + 1))
import json, re, sys
path, pat, name, what = sys.argv[1:5]
try:
    rows = json.load(open(path, encoding="utf-8"))["candidates"]
except (OSError, ValueError, KeyError) as e:
    print(f"FAIL: {name}: {what}: no results ({e})", file=sys.stderr)
    sys.exit(1)
bad = [r for r in rows if not re.search(pat, r.get("detail") or "")]
for r in bad:
    print(f"FAIL: {name}: {what}: row {r['query']} {r['mode']} is {r['class']} with detail {r.get('detail')!r}, "
          f"which does not match {pat!r}", file=sys.stderr)
if not rows:
    print(f"FAIL: {name}: {what}: no rows", file=sys.stderr)
sys.exit(1 if bad or not rows else 0)
PY
}

# PARTS (default "corpus experts bench"): which of the three to run (a GPU call short of time)
want() { [[ " ${PARTS:-corpus experts bench} " == *" $1 "* ]]; }
if want corpus; then
# ---- 1. the CUDA budget corpus, lineitem streamed ----
for c in $(cd "$CAND" && ls); do
    eval_case "budget-$c" "$CAND/$c" "$(cat "$CAND/$c/EXPECTED")" --mem-budget 512K
done
python3 - "$WORK/results/budget-honest/results.json" <<'PY' || { echo "FAIL: the honest streaming Q6's loads (above)" >&2; failures=$((failures + 1)); }
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["config"]["mem_budget"] == 512 * 1024, doc["config"]
r = doc["candidates"][0]
st = r.get("streamed") or {}
msg = f"honest: {r['class']} ({r.get('detail')}), streamed {st}"
assert st.get("partitioned") and st.get("chunks", 0) >= 2, "not streamed in runs: " + msg
assert st.get("candidate_bytes") == st.get("baseline_bytes") and st["baseline_bytes"] > 0, \
    "its loads do not total the baseline's streamed bytes: " + msg
print(f"ok: honest loaded {st['candidate_bytes']:.0f} bytes, the baseline streamed {st['baseline_bytes']:.0f} "
      f"in {st['chunks']} runs")
PY
detail_has budget-over_budget 'the loader: load of partitions 0\.\.7' "the detail does not name the loader's refusal"
detail_has budget-hoards_loads 'the loader: load of partitions [0-9]+\.\.[0-9]+ \([0-9]+ bytes\) refused: with the [0-9]+ bytes held it would pass load_limit' \
    "the detail does not name the loads held past load_limit"
detail_has budget-no_marker 'does not stream' "the detail does not say it does not stream"

# ---- the same candidates under a budget the query fits (nothing streams) ----
eval_case fits-no_marker "$CAND/no_marker" ok --mem-budget 1G
eval_case fits-honest "$CAND/honest" ok --mem-budget 1G

# ---- no handle to a streamable table reaches a worker under a budget ----
# (harness_cuda.h, dkb__eval_cuda_open: the evaluating process leaves out
# lineitem, orders, part and partsupp; a worker loads what a query that fits
# reads itself): the job files' cuda_columns name none of them, streamed
# (512K) or fitting (1G), and name the tables that stay (nation ...).
python3 - "$WORK/results/budget-honest" "$WORK/results/fits-honest" <<'PY' || { echo "FAIL: a worker was handed a streamable table (above)" >&2; failures=$((failures + 1)); }
import glob, json, sys
for out in sys.argv[1:]:
    jobs = glob.glob(out + "/work/**/job.json", recursive=True)
    assert jobs, f"{out}: no job.json under work/"
    for j in jobs:
        tables = {c["table"] for c in json.load(open(j))["cuda_columns"]}
        bad = tables & {"lineitem", "orders", "part", "partsupp"}
        assert not bad, f"{j}: cuda_columns holds {sorted(bad)}"
        assert "nation" in tables, f"{j}: cuda_columns lacks nation: {sorted(tables)}"
    print(f"ok: {out}: {len(jobs)} job(s), cuda_columns without the streamable tables")
PY

fi

# ---- 2. the CUDA experts under 8M at SF 0.1 ----
D="$WORK/sf01p8"
BUDGET=8M
BUDGET_BYTES=$((8 << 20))
if want experts || want bench; then
    "$DKB" gen --sf 0.1 --partitions 8 --out "$D" -q || fail "dkb gen --sf 0.1 --partitions 8 failed"
fi
if want experts; then
# the sizes per query, from the too-small message of `dkb run --backend cuda --mem-budget 1`
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    { "$DKB" run "$q" --backend cuda --data "$D" --mem-budget 1 >/dev/null 2>"$WORK/need-$q.err" || true; } &
    [ $((n % 8)) != 0 ] || wait
done
wait
re="\(([0-9]+) bytes: resident tables ([0-9]+) \+ the largest partition of ([a-z]+( and [a-z]+)?) ([0-9]+)\)"
bad=()
lineitem=""
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    err=$(cat "$WORK/need-$q.err")
    [[ $err =~ $re ]] || { bad+=("$q: no too-small message from dkb run --mem-budget 1: $(head -c 300 <<<"$err")"); continue; }
    resident=${BASH_REMATCH[2]} tables=${BASH_REMATCH[3]} largest=${BASH_REMATCH[5]}
    need2=$((resident + 2 * largest))
    echo "$q: resident $resident + 2 x the largest partition of $tables $largest = $need2 (of $BUDGET_BYTES)"
    [ "$need2" -le "$BUDGET_BYTES" ] ||
        bad+=("$q: --mem-budget $BUDGET does not hold its resident tables + 2 x its largest partition ($need2 bytes)")
    case $tables in *lineitem*) lineitem="$lineitem $q" ;; esac
done
for m in "${bad[@]}"; do echo "FAIL: sizes: $m" >&2; done
[ "${#bad[@]}" = 0 ] || failures=$((failures + 1))

rc=0
"$DKB" eval "$ROOT/src/kernels/cuda" --backend cuda --data "$D" --out "$WORK/results/experts" --mem-budget "$BUDGET" \
    --seeds 2 --min-seconds 0.1 -q >"$WORK/experts.stdout" 2>"$WORK/experts.stderr" || rc=$?
if [ "$rc" != 0 ]; then
    echo "FAIL: dkb eval src/kernels/cuda --mem-budget $BUDGET exited $rc: $(tail -3 "$WORK/experts.stderr" | tr '\n' ' ')" >&2
    failures=$((failures + 1))
else
    python3 - "$WORK/results/experts/results.json" "$BUDGET_BYTES" "$lineitem" <<'PY' || failures=$((failures + 1))
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
budget, lineitem = int(sys.argv[2]), set(sys.argv[3].split())
rows = {r["query"]: r for r in doc["candidates"]}
bad = []
if doc["config"].get("mem_budget") != budget:
    bad.append(f"config.mem_budget {doc['config'].get('mem_budget')}, expected {budget}")
if len(doc["candidates"]) != 22 or len(rows) != 22:
    bad.append(f"{len(doc['candidates'])} rows for {len(rows)} queries, expected 22")
if doc.get("harness_errors"):
    bad.append(f"harness_errors = {doc['harness_errors']}")
for q in sorted(rows):
    r = rows[q]
    st = r.get("streamed") or {}
    row = f"{q} {r['mode']}: {r['class']} ({r.get('detail') or ''}), streamed {st}"
    if r["class"] != "ok":
        bad.append(row)
    elif st.get("partitioned") and not st.get("candidate_bytes"):
        bad.append(row + ": streamed, but no loads recorded")
    elif q in lineitem and not (st.get("partitioned") and st.get("chunks", 0) >= 2):
        bad.append(row + ": reads lineitem, expected it streamed in at least 2 runs")
    else:
        how = (f"{st['chunks']} runs, the baseline {st['baseline_bytes']:.0f} bytes, the expert's loads "
               f"{st['candidate_bytes']:.0f}") if st.get("partitioned") else "fits"
        print(f"ok: expert {q} under --mem-budget {budget}: {how}")
for b in bad:
    print("FAIL: experts under --mem-budget:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
fi

fi

if want bench; then
# ---- 3. dkb bench --backend cuda --mem-budget: bytes streamed and transfer floors ----
rc=0
"$DKB" bench --backend cuda --data "$D" --experts "$ROOT/src/kernels/cuda" --queries q01,q06,q09,q22 --seeds 1 --quick \
    --mem-budget "$BUDGET" --out "$WORK/bench" -q >"$WORK/bench.stdout" 2>"$WORK/bench.stderr" || rc=$?
if [ "$rc" != 0 ]; then
    echo "FAIL: dkb bench --backend cuda --mem-budget $BUDGET exited $rc: $(tail -3 "$WORK/bench.stderr" | tr '\n' ' ')" >&2
    failures=$((failures + 1))
else
    sed -n '/^streamed under/,/^$/p' "$WORK/bench.stdout"
    bench_bad=()
    grep -Eq "^streamed under --mem-budget $BUDGET_BYTES bytes \(one call; pinned host-to-device [0-9.]+ GB/s" "$WORK/bench.stdout" ||
        bench_bad+=("no streamed table with the measured pinned bandwidth")
    grep -Eq "^query +baseline +baseline bytes +expert bytes +floor ms +base/floor +expert/floor" "$WORK/bench.stdout" ||
        bench_bad+=("the streamed table has no floor ms columns")
    for q in q01 q06 q09; do
        grep -Eq "^$q +[0-9]+ runs +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$WORK/bench.stdout" ||
            bench_bad+=("no streamed row for $q with its floor")
    done
    grep -Eq "^q22 +fits " "$WORK/bench.stdout" || bench_bad+=("q22 (it fits) is not shown as fitting")
    for m in "${bench_bad[@]}"; do echo "FAIL: bench: $m; its stdout: $(cat "$WORK/bench.stdout")" >&2; done
    [ "${#bench_bad[@]}" = 0 ] || failures=$((failures + 1))
    python3 - "$WORK/bench/results.json" <<'PY' || failures=$((failures + 1))
import json, sys
b = json.load(open(sys.argv[1], encoding="utf-8"))["bench"]
qs = {r["query"]: r for r in b["queries"]}
bad = []
if not b.get("pinned_h2d_gbs", 0) > 1:
    bad.append(f"pinned_h2d_gbs {b.get('pinned_h2d_gbs')}")
for q in ("q01", "q06", "q09", "q22"):
    r = qs.get(q)
    if r is None:
        bad.append(f"{q}: no row")
        continue
    row = f"{q}: {r['class']} " + str({k: r.get(k) for k in ("partitioned", "baseline_runs", "baseline_streamed_bytes",
        "expert_streamed_bytes", "baseline_transfer_floor_ms", "expert_transfer_floor_ms")})
    if r["class"] != "ok":
        bad.append(row + ": not ok")
    elif q == "q22":
        if r.get("partitioned") or r.get("baseline_streamed_bytes") != 0:
            bad.append(row + ": expected to fit (nothing streamed)")
    elif not (r.get("partitioned") and r.get("expert_streamed_bytes", 0) > 0
              and r.get("expert_transfer_floor_ms", 0) > 0 and r.get("baseline_transfer_floor_ms", 0) > 0):
        bad.append(row + ": expected streamed, with the expert's loads and both transfer floors")
    else:
        print(f"ok: bench {q}: expert loads {r['expert_streamed_bytes']:.0f} bytes, "
              f"transfer floor {r['expert_transfer_floor_ms']:.3f} ms at {b['pinned_h2d_gbs']:.1f} GB/s")
for m in bad:
    print("FAIL: bench results.json:", m, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
fi

fi

[ "$failures" = 0 ] || fail "$failures check(s) failed (KEEP_WORK=1 keeps $WORK)"
pass "CUDA candidates and experts under a memory budget classified as expected"
