# comm_nccl_cuda.sh: `dkb run --backend cuda --comm nccl` on a GPU
# (docs/distributed.md): at SF 0.01 (a store of 8 partitions), `dkb run
# all` for seeds 0..5 must match the goldens and print, byte for byte, the
# JSON of the plain `dkb run --backend cuda`: with one process (the NCCL
# communicator bootstrapped by the single one), and, when mpirun and the
# MPI module are there, under `mpirun -np 1` and `-np 2`. Two ranks on two
# GPUs exchange their partials through NCCL (22 split lines say so); two
# ranks sharing one GPU are refused in one line naming both ranks (NCCL
# takes one GPU per rank), and then `-np 2 --comm mpi` on the one GPU must
# give the plain output. Rank 0's setup line must report the self-check.
#
# Exits 77 (CTest: skipped) only when `dkb run --backend cuda` reports no
# GPU or a build without CUDA. A build with CUDA but without NCCL fails,
# unless DKB_ALLOW_NO_NCCL=1 (then 77).
source "$(dirname "$0")/lib/common.bash"

ANS=$(cd "$(dirname "$0")/../answers" 2>/dev/null && pwd) || fail "tests/answers is missing"
SEEDS="0 1 2 3 4 5"
S=$WORK/sf0.01
"$DKB" gen --sf 0.01 --partitions 8 --out "$S" -q || fail "dkb gen --sf 0.01 --partitions 8 failed"

# ---- a GPU, and NCCL? ----
rc=0
probe=$(timeout 120 "$DKB" run q06 --backend cuda --data "$S" 2>&1 >/dev/null) || rc=$?
if [ "$rc" != 0 ]; then
    if printf '%s' "$probe" | grep -Eqi 'no GPU|not available in this build|without CUDA|no CUDA'; then
        echo "skip: dkb run --backend cuda has no GPU here: $(printf '%s' "$probe" | head -1)"
        exit 77
    fi
    fail "dkb run q06 --backend cuda exited $rc (not a missing GPU): $(printf '%s' "$probe" | head -3 | tr '\n' ' ')"
fi
rc=0
probe=$(timeout 120 "$DKB" run q06 --backend cuda --comm nccl --data "$S" 2>&1 >/dev/null) || rc=$?
if [ "$rc" != 0 ] && printf '%s' "$probe" | grep -q 'built without NCCL'; then
    [ "${DKB_ALLOW_NO_NCCL:-0}" = 1 ] && { echo "skip: $probe (DKB_ALLOW_NO_NCCL=1)"; exit 77; }
    fail "a GPU but no NCCL in this build: $probe (install NCCL's nccl.h and rebuild, or DKB_ALLOW_NO_NCCL=1)"
fi
[ "$rc" = 0 ] || fail "dkb run q06 --backend cuda --comm nccl exited $rc: $(printf '%s' "$probe" | head -3 | tr '\n' ' ')"
pass "the CUDA backend and its NCCL communicator run q06"

SETUP='^dkb run: --comm nccl: %s, rank 0 on GPU [0-9]+ \([0-9A-Fa-f:.]+\), NCCL set up in [0-9.]+ ms; .*; self-check ok: all-reduce of 8 bytes [0-9.]+ us, all-gather of [0-9]+ bytes [0-9.]+ us'
RUN=(run all --backend cuda --format json --data "$S")
failures=()
# check NAME CMD...: for every seed, `CMD dkb run all ... $OPTS` must exit 0
# with the plain output, rank 0's setup line (when SETUP_RANKS: "1 rank",
# "2 ranks") and NSPLIT split lines ending in SPLIT (when NSPLIT is given)
check() {
    local name=$1 s rc before=${#failures[@]}
    shift
    for s in $SEEDS; do
        rc=0
        timeout 300 "$@" "$DKB" "${RUN[@]}" $OPTS --seed "$s" --expect-dir "$ANS/sf0.01" >"$WORK/out.json" 2>"$WORK/err" || rc=$?
        [ "$rc" = 0 ] || { failures+=("$name seed $s: exit $rc: $(head -2 "$WORK/err" | tr '\n' ' ')"); continue; }
        cmp -s "$WORK/out.json" "$WORK/plain-$s.json" ||
            { failures+=("$name seed $s: output differs from the plain run"); continue; }
        if [ -n "$SETUP_RANKS" ]; then
            # shellcheck disable=SC2059
            grep -Eq "$(printf "$SETUP" "$SETUP_RANKS")" "$WORK/err" ||
                { failures+=("$name seed $s: no setup line: $(head -1 "$WORK/err")"); continue; }
        fi
        local n
        n=$(grep -c "^dkb run: q[0-9]* on 2 ranks: 8 partitions split over the ranks, .*gathered$SPLIT$" "$WORK/err" || true)
        [ -z "$NSPLIT" ] || [ "$n" = "$NSPLIT" ] ||
            { failures+=("$name seed $s: $n of $NSPLIT split lines$SPLIT: $(head -2 "$WORK/err" | tr '\n' ' ')"); continue; }
    done
    [ "${#failures[@]}" = "$before" ] && pass "$name: seeds ${SEEDS// /,}: the goldens, the plain output byte for byte"
    return 0
}

for s in $SEEDS; do
    "$DKB" "${RUN[@]}" --seed "$s" --expect-dir "$ANS/sf0.01" >"$WORK/plain-$s.json" 2>"$WORK/err" ||
        fail "plain --backend cuda seed $s: $(head -2 "$WORK/err")"
done
pass "plain --backend cuda: 22 queries x 6 seeds match the goldens"

OPTS="--comm nccl" SETUP_RANKS="1 rank" NSPLIT="" SPLIT="" check "--comm nccl, one process" env

if ! command -v mpirun >/dev/null; then
    pass "mpirun not installed: the runs across ranks left out"
else
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
    MPI=(mpirun -q --bind-to none)
    rc=0
    "${MPI[@]}" -np 1 "$DKB" run q06 --backend cuda --data "$S" >/dev/null 2>"$WORK/err" || rc=$?
    if [ "$rc" != 0 ] && grep -q "built without MPI" "$WORK/err"; then
        pass "built without MPI: the runs across ranks left out: $(head -1 "$WORK/err")"
    else
        OPTS="--comm nccl" SETUP_RANKS="1 rank" NSPLIT="" SPLIT="" check "mpirun -np 1 --comm nccl" "${MPI[@]}" -np 1
        OPTS="--comm mpi" SETUP_RANKS="" NSPLIT=22 SPLIT="" check "mpirun -np 2 --comm mpi" "${MPI[@]}" -np 2
        # two ranks: on two GPUs through NCCL; on one GPU refused
        rc=0
        "${MPI[@]}" -np 2 "$DKB" run q06 --backend cuda --comm nccl --data "$S" >"$WORK/out" 2>"$WORK/err" || rc=$?
        if [ "$rc" = 0 ]; then
            OPTS="--comm nccl" SETUP_RANKS="2 ranks" NSPLIT=22 SPLIT=" through NCCL" \
                check "mpirun -np 2 --comm nccl" "${MPI[@]}" -np 2
        elif [ "$rc" = 1 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && [ ! -s "$WORK/out" ] &&
            grep -Eq '^dkb run: error: --comm nccl: ranks 0 and 1 would share GPU .*NCCL takes one GPU per rank' "$WORK/err"; then
            pass "mpirun -np 2 --comm nccl on one GPU: $(cat "$WORK/err")"
        else
            failures+=("mpirun -np 2 --comm nccl q06: exit $rc: $(head -3 "$WORK/err" | tr '\n' ' ')")
        fi
    fi
fi
for m in "${failures[@]}"; do echo "FAIL: $m" >&2; done
[ "${#failures[@]}" = 0 ] || fail "${#failures[@]} runs through NCCL failed"
pass "--comm nccl on the CUDA backend: the plain run's output"
