# eval_ranks.sh: the ranks part of the candidate ABI (candidate.h, "ranks":
# env->rank, env->nranks and the collectives of env->comm) and what `dkb
# eval` does with it today (docs/distributed.md, "The harness across
# ranks"):
#   - on one process (every evaluation today) a call is rank 0 of 1: the
#     example ranks candidate (tests/candidates/ranks/q06.full.c: each
#     rank sums its rows, all-reduces, rank 0 writes the row) is ok, on an
#     SF 0.01 store whole and of 8 partitions; the collectives refuse bad
#     arguments with DKB_CAND_EINVAL and hand back the caller's own values
#     (tests/candidates/ranks_args: returned_error, "returned 1
#     (DKB_CAND_EINVAL"); a candidate unaware of ranks (the honest corpus)
#     is unaffected;
#   - under mpirun on 2 and 3 ranks `dkb eval` is still refused in one line
#     from rank 0 (exit 2, nothing written): the relay of the collectives
#     between ranks is designed, not built.
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
for np in 2 3; do
    rc=0
    "${MPI[@]}" -np $np "$DKB" eval "$CAND/ranks" --data "$S8" --out "$WORK/np$np" -q >"$WORK/out" 2>"$WORK/err" || rc=$?
    [ "$rc" = 2 ] || fail "mpirun -np $np dkb eval exited $rc, expected 2: $(cat "$WORK/err")"
    [ "$(wc -l <"$WORK/err")" = 1 ] &&
        grep -q "^dkb: dkb eval was started by mpirun ($np ranks): only dkb run runs across ranks" "$WORK/err" ||
        fail "mpirun -np $np dkb eval: $(cat "$WORK/err")"
    [ ! -s "$WORK/out" ] || fail "mpirun -np $np dkb eval printed on stdout"
    [ ! -e "$WORK/np$np" ] || fail "mpirun -np $np dkb eval wrote $WORK/np$np"
    pass "mpirun -np $np dkb eval: refused: $(cat "$WORK/err")"
done
