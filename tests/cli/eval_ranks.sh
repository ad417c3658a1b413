# eval_ranks.sh: the ranks part of the candidate ABI (candidate.h, "ranks":
# env->rank, env->nranks and the collectives of env->comm) and `mpirun -np K
# dkb eval` (docs/distributed.md, "The harness across ranks"):
#   - on one process a call is rank 0 of 1: the example ranks candidate
#     (tests/candidates/ranks/q06.full.c: each rank sums its rows,
#     all-reduces, rank 0 writes the row) is ok, on an SF 0.01 store whole
#     and of 8 partitions; the collectives refuse bad arguments with
#     DKB_CAND_EINVAL and hand back the caller's own values
#     (tests/candidates/ranks_args: returned_error, "returned 1
#     (DKB_CAND_EINVAL"); a candidate unaware of ranks (the honest corpus)
#     is unaffected;
#   - under mpirun on 2 and 3 ranks (8 partitions: 4+4, and 2+3+3) every
#     candidate runs on all ranks at once, its collectives relayed by each
#     rank's dkb eval (src/harness/relay.h): the example ranks Q6 is ok;
#     tests/candidates/ranks_adversarial: a trap on rank 1 only is crash
#     (forges_relay, forges_relay_stdout: a forged agreement in the relay's
#     pipe is refused or caught out of step)
#     ("rank 1: SIGILL"), a wrong partial on rank 1 is wrong_answer (checked
#     on rank 0), rank 1 skipping the collectives is returned_error ("rank
#     1: returned without the collective the other ranks wait in"), rank 1
#     looping forever is timeout ("rank 1: killed after") within the
#     timeout and the evaluation goes on to the next row (ok); the honest
#     corpus (no DKB_CANDIDATE_RANKS) is ok, run on rank 0 alone; only rank
#     0 prints and writes results; unsupported options and a store missing
#     on one rank are refused in one line.
# Exits 77 (skipped) after the one-process checks when mpirun is not
# installed.
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CAND="$ROOT/tests/candidates"
S="$WORK/sf001"
S8="$WORK/sf001p8"
"$DKB" gen --sf 0.01 --out "$S" -q
"$DKB" gen --sf 0.01 --partitions 8 --out "$S8" -q

check_results() {
    python3 "$(dirname "$0")/lib/corpus_results.py" "$@" .full.c
}

# eval_case NAME DIR STORE EXPECTED: dkb eval of DIR's candidates, each row of class EXPECTED
eval_case() {
    local name=$1 dir=$2 store=$3 expected=$4 out="$WORK/results/$1" rc=0
    "$DKB" eval "$dir" --data "$store" --out "$out" --seeds 3 --min-seconds 0.2 --threads 1 -q --mode full \
        >"$WORK/$name.stdout" 2>"$WORK/$name.stderr" || rc=$?
    [ "$rc" = 0 ] || fail "dkb eval $name exited $rc: $(tail -3 "$WORK/$name.stderr")"
    check_results "$out/results.json" "$expected" "$dir" || fail "$name: not classified $expected"
    pass "$name: $expected"
}

eval_case ranks "$CAND/ranks" "$S" "$(cat "$CAND/ranks/EXPECTED")"
eval_case ranks-p8 "$CAND/ranks" "$S8" "$(cat "$CAND/ranks/EXPECTED")"
eval_case ranks_args "$CAND/ranks_args" "$S" "$(cat "$CAND/ranks_args/EXPECTED")"
grep -q 'returned 1 (DKB_CAND_EINVAL' "$WORK/results/ranks_args/results.json" ||
    fail "ranks_args: the row does not say the last collective returned DKB_CAND_EINVAL"
eval_case honest "$CAND/honest" "$S" ok

command -v mpirun >/dev/null || { echo "skip: mpirun not found (Debian: openmpi-bin libopenmpi-dev): the refusal across ranks is not checked"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1
# no leak check under mpirun (Open MPI's unloaded plugins: ranks.sh)
MPI=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" mpirun -q --oversubscribe)
# ranks_case NP NAME DIR "Q CLASS [DETAIL-RE]"...: mpirun -np NP dkb eval DIR; each
# row of query Q has CLASS (and a detail matching DETAIL-RE); nothing on the
# other ranks' stdout, one results.json, and mpirun exits 0 within the limit
ranks_case() {
    local np=$1 name=$2 dir=$3 out="$WORK/r/$2-np$1" rc=0 t0
    shift 3
    t0=$(date +%s)
    timeout 150 "${MPI[@]}" -np "$np" "$DKB" eval "$dir" --data "$S8" --out "$out" --seeds 2 --warmup 1 --min-runs 3 \
        --min-seconds 0 --threads 1 --timeout "${TIMEOUT:-30}" -q --format json \
        >"$WORK/$name.np$np.out" 2>"$WORK/$name.np$np.err" || rc=$?
    [ "$rc" = 0 ] || fail "mpirun -np $np dkb eval $name exited $rc: $(tail -3 "$WORK/$name.np$np.err")"
    python3 - "$out/results.json" "$WORK/$name.np$np.out" "$@" <<'PY' || fail "mpirun -np $np dkb eval $name: rows not as expected"
import json, re, sys
doc = json.load(open(sys.argv[1]))
printed = json.load(open(sys.argv[2]))   # --format json: rank 0's stdout is results.json, once
assert printed["candidates"] == doc["candidates"], "stdout is not results.json"
rows = {r["query"]: r for r in doc["candidates"]}
bad = []
for want in sys.argv[3:]:
    q, cls, *rest = want.split(" ", 2)
    r = rows.pop(q, None)
    if r is None:
        bad.append(f"{q}: no row"); continue
    if r["class"] != cls or (rest and not re.search(rest[0], r["detail"])):
        bad.append(f"{q}: {r['class']} ({r['detail']}); expected {cls} {rest}")
    if r.get("baseline_error"):
        bad.append(f"{q}: baseline error {r['baseline_error']}")
bad += [f"{q}: extra row" for q in rows]
if doc.get("harness_errors"):
    bad.append(f"{doc['harness_errors']} harness errors")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    [ ! -e "$out/work/rank-1/results.json" ] || fail "$name: rank 1 wrote results"
    pass "mpirun -np $np dkb eval $name: $* ($(($(date +%s) - t0)) s)"
}

ADV="$CAND/ranks_adversarial"
for np in 2 3; do
    ranks_case $np ranks "$CAND/ranks" "q06 ok ^$"
    ranks_case $np crash_rank1 "$ADV/crash_rank1" "q06 crash ^rank 1: SIGILL"
    ranks_case $np wrong_rank1 "$ADV/wrong_rank1" "q06 wrong_answer ^seed 0: row 1, column revenue: got"
    ranks_case $np skip_rank1 "$ADV/skip_rank1" \
        "q06 returned_error ^rank 1: returned without the collective the other ranks wait in \(rank 0 in the candidate's allreduce_i128"
    TIMEOUT=6 ranks_case $np hang_rank1 "$ADV/hang_rank1" "q01 timeout ^rank 1: killed after" "q06 ok ^$"
done
# a rank that writes a forged agreement into the relay's pipe: refused at the
# import check (write), or, through stdout's descriptor, caught out of step
ranks_case 2 forges_relay "$ADV/forges_relay" "q06 forbidden_symbol ^imports write"
ranks_case 2 forges_relay_stdout "$ADV/forges_relay_stdout" \
    "q06 returned_error ^rank 1: returned without the collective the other ranks wait in \(rank 0 in the candidate's allreduce_i128.*rank 1 in the harness's agreement"
ranks_case 2 honest "$CAND/honest" "q01 ok ^ran on rank 0 alone over the whole store" "q06 ok ^ran on rank 0 alone"

# refused in one line from rank 0, exit 2, before anything is written
for opt in "--mode core" "--mem-budget 8M" "--target python"; do
    rc=0
    # shellcheck disable=SC2086
    "${MPI[@]}" -np 2 "$DKB" eval "$CAND/ranks" --data "$S8" --out "$WORK/refused" $opt -q >"$WORK/out" 2>"$WORK/err" || rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -q "not across ranks yet" "$WORK/err" ||
        fail "mpirun -np 2 dkb eval $opt: exit $rc: $(cat "$WORK/err")"
    [ ! -s "$WORK/out" ] && [ ! -e "$WORK/refused" ] || fail "mpirun -np 2 dkb eval $opt wrote something"
    pass "mpirun -np 2 dkb eval $opt: refused: $(cat "$WORK/err")"
done
# --backend cuda runs across ranks (one GPU per rank: local rank mod the node's
# GPUs; docs/distributed.md); on a machine without a GPU it stops every rank
# with the one-GPU message, exit 1, before anything is written
rc=0
"${MPI[@]}" -np 2 "$DKB" eval "$CAND/ranks" --data "$S8" --out "$WORK/cuda-ranks" --backend cuda -q \
    >"$WORK/out" 2>"$WORK/err" || rc=$?
if grep -q "no usable GPU" "$WORK/err"; then
    [ "$rc" != 0 ] && [ ! -e "$WORK/cuda-ranks" ] ||
        fail "mpirun -np 2 dkb eval --backend cuda without a GPU: exit $rc, or it wrote $WORK/cuda-ranks"
    pass "mpirun -np 2 dkb eval --backend cuda without a GPU: exit $rc, nothing written: $(grep -m1 'no usable GPU' "$WORK/err")"
else
    [ "$rc" = 0 ] || fail "mpirun -np 2 dkb eval --backend cuda: exit $rc: $(tail -3 "$WORK/err")"
    pass "mpirun -np 2 dkb eval --backend cuda ran (a GPU is here)"
fi

# a store missing on rank 1: one line naming the rank, exit 1 on every rank
rc=0
"${MPI[@]}" -np 1 "$DKB" eval "$CAND/ranks" --data "$S8" --out "$WORK/nostore" -q : \
    -np 1 "$DKB" eval "$CAND/ranks" --data "$WORK/elsewhere" --out "$WORK/nostore" -q >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -q "^dkb eval: error: rank 1: " "$WORK/err" ||
    fail "a store missing on rank 1: exit $rc: $(cat "$WORK/err")"
pass "a store missing on rank 1: $(cat "$WORK/err")"
