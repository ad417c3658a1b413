# experts_ranks.sh: the 22 expert CPU candidates across ranks (issue 16
# item 4; docs/distributed.md, "The experts across ranks") and `mpirun -np
# K dkb bench`:
#   - every src/kernels/cpu/qNN.full.c defines DKB_CANDIDATE_RANKS;
#   - `mpirun -np 2` and `-np 3 --oversubscribe dkb eval src/kernels/cpu`
#     on an SF 0.01 store of 8 partitions (4+4, and 2+3+3) gives 22 of 22
#     ok on seed 0 and 5 random seeds, each run on its rank's share (no row
#     "ran on rank 0 alone"), checked on rank 0 against the baseline;
#   - `mpirun -np 2 dkb bench --backend cpu --quick --queries q01,q06`:
#     results.json's bench has "ranks": 2 and per query expert_1rank_ms and
#     scaling_efficiency = expert_1rank_ms / (2 x expert_ms); the table has
#     the columns "expert 2r ms", "expert 1r ms" and "eff." and its note
#     line; the CSV the three columns; nothing from rank 1, and rank 1
#     writes no results; --backend cuda and --mem-budget under mpirun are
#     refused in one line (exit 2).
# Exits 77 (skipped) only when mpirun is not installed.
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
EXPERTS="$ROOT/src/kernels/cpu"
for f in "$EXPERTS"/q*.full.c; do
    grep -q '^DKB_CANDIDATE_RANKS;' "$f" || fail "$f does not define DKB_CANDIDATE_RANKS"
done
pass "the 22 CPU experts define DKB_CANDIDATE_RANKS"

command -v mpirun >/dev/null || { echo "skip: mpirun not found (Debian: openmpi-bin libopenmpi-dev)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1
# no leak check under mpirun (Open MPI's unloaded plugins: ranks.sh)
MPI=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" mpirun -q --oversubscribe)
S8="$WORK/sf001p8"
"$DKB" gen --sf 0.01 --partitions 8 --out "$S8" -q

# the 22 experts on NP ranks: 22 rows ok, none on rank 0 alone
for np in 2 3; do
    out="$WORK/eval-np$np" rc=0 t0=$(date +%s)
    timeout 240 "${MPI[@]}" -np "$np" "$DKB" eval "$EXPERTS" --data "$S8" --out "$out" --mode full --seeds 5 \
        --warmup 0 --min-runs 1 --min-seconds 0 --threads 1 --timeout 60 -q --format json \
        >"$WORK/eval-np$np.out" 2>"$WORK/eval-np$np.err" || rc=$?
    [ "$rc" = 0 ] || fail "mpirun -np $np dkb eval src/kernels/cpu exited $rc: $(tail -3 "$WORK/eval-np$np.err")"
    python3 - "$out/results.json" "$np" <<'PY' || fail "mpirun -np $np dkb eval src/kernels/cpu: not 22 of 22 ok"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["candidates"]
bad = [f"{r['query']}: {r['class']} ({r['detail']})" for r in rows
       if r["class"] != "ok" or "alone" in r["detail"] or r.get("baseline_error")]
if len(rows) != 22 or doc.get("harness_errors"):
    bad.append(f"{len(rows)} rows, {doc.get('harness_errors')} harness errors")
if len(doc["config"]["seeds"]) != 6:
    bad.append(f"seeds {doc['config']['seeds']}")
for r in rows:
    checks = r.get("checks") or []
    if len(checks) != 6 or not all(c["ok"] for c in checks):
        bad.append(f"{r['query']}: checks {checks}")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    [ ! -e "$out/work/rank-1/results.json" ] || fail "mpirun -np $np dkb eval: rank 1 wrote results"
    pass "mpirun -np $np dkb eval src/kernels/cpu: 22 of 22 ok on 6 seeds, each on its share ($(($(date +%s) - t0)) s)"
done

# dkb bench across 2 ranks: the K-rank and one-rank times and the efficiency
bench() { # bench NAME FORMAT
    local rc=0
    timeout 120 "${MPI[@]}" -np 2 "$DKB" bench --backend cpu --data "$S8" --quick --queries q01,q06 --seeds 1 \
        --threads 1 --out "$WORK/bench-$1" --format "$2" >"$WORK/bench-$1.out" 2>"$WORK/bench-$1.err" || rc=$?
    [ "$rc" = 0 ] || fail "mpirun -np 2 dkb bench --format $2 exited $rc: $(tail -3 "$WORK/bench-$1.err")"
    [ ! -e "$WORK/bench-$1/work/rank-1/results.json" ] || fail "mpirun -np 2 dkb bench: rank 1 wrote results"
}
bench table table
python3 - "$WORK/bench-table/results.json" <<'PY' || fail "mpirun -np 2 dkb bench: results.json's ranks fields"
import json, math, sys
b = json.load(open(sys.argv[1]))["bench"]
assert b["ranks"] == 2, b["ranks"]
rows = {r["query"]: r for r in b["queries"]}
assert sorted(rows) == ["q01", "q06"], sorted(rows)
for q, r in rows.items():
    assert r["class"] == "ok" and r["ranks"] == 2, r
    t1, tk, eff = r["expert_1rank_ms"], r["expert_ms"], r["scaling_efficiency"]
    assert t1 > 0 and tk > 0, r
    assert math.isclose(eff, t1 / (2 * tk), rel_tol=1e-9), r
print("ok")
PY
head -1 "$WORK/bench-table.out" | grep -Eq '^query +baseline ms +expert 2r ms +expert 1r ms +eff\. +speedup ' ||
    fail "the bench table's header: $(head -1 "$WORK/bench-table.out")"
grep -Eq '^q06 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x ' "$WORK/bench-table.out" ||
    fail "the bench table's q06 row: $(grep '^q06' "$WORK/bench-table.out")"
grep -q '^2 ranks (mpirun): baseline and expert ms on 2 ranks' "$WORK/bench-table.out" ||
    fail "the bench table says nothing of the ranks"
pass "mpirun -np 2 dkb bench: $(grep '^q06' "$WORK/bench-table.out" | cut -c1-70)"
bench csv csv
head -1 "$WORK/bench-csv.out" | grep -q ',ranks,expert_1rank_ms,scaling_efficiency$' ||
    fail "the bench CSV's header: $(head -1 "$WORK/bench-csv.out")"
[ "$(grep -c '^q0[16],ok,yes,.*,2,[0-9.]*,[0-9.]*$' "$WORK/bench-csv.out")" = 2 ] ||
    fail "the bench CSV's rows: $(cat "$WORK/bench-csv.out")"
pass "mpirun -np 2 dkb bench --format csv: $(head -1 "$WORK/bench-csv.out")"

# refused under mpirun: one line from rank 0, exit 2, nothing written
for opt in "--mem-budget 8M"; do
    rc=0
    # shellcheck disable=SC2086
    "${MPI[@]}" -np 2 "$DKB" bench --data "$S8" --quick --out "$WORK/refused" $opt -q >"$WORK/out" 2>"$WORK/err" || rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -q "not across ranks yet" "$WORK/err" ||
        fail "mpirun -np 2 dkb bench $opt: exit $rc: $(cat "$WORK/err")"
    [ ! -s "$WORK/out" ] && [ ! -e "$WORK/refused" ] || fail "mpirun -np 2 dkb bench $opt wrote something"
    pass "mpirun -np 2 dkb bench $opt: refused: $(cat "$WORK/err")"
done
