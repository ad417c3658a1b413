# comm_option.sh: `dkb run --comm mpi|nccl` (docs/distributed.md) where no
# GPU is needed: the option's usage errors (--comm nccl without --backend
# cuda, an unknown value, a missing one: exit 2, one line); --comm mpi is
# the default run, byte for byte (one process, and under mpirun on 2 ranks
# when mpirun is installed); --comm nccl --backend cuda whose NCCL module
# cannot be loaded (or a build without NCCL) is refused in one line, exit
# 1, nothing on stdout, before the store or the GPU are looked at, and
# under mpirun said once, by rank 0; --help documents --comm. The NCCL path
# itself needs a GPU: comm_nccl_cuda.sh. Never skipped (without mpirun
# only its mpirun part is left out, and says so).
source "$(dirname "$0")/lib/common.bash"

"$DKB" gen --sf 0.01 --partitions 4 --out "$WORK/sf0.01" -q || fail "dkb gen --sf 0.01 --partitions 4 failed"
S=$WORK/sf0.01

# ---- usage errors ----
expect_fail 2 "^dkb: run: --comm nccl needs --backend cuda" -- "$DKB" run q06 --data "$S" --comm nccl
expect_fail 2 "^dkb: run: --comm nccl needs --backend cuda" -- "$DKB" run q06 --data "$S" --comm nccl --backend cpu
expect_fail 2 "^dkb: --comm gloo: expected mpi or nccl" -- "$DKB" run q06 --data "$S" --comm gloo
expect_fail 2 "^dkb: run: option --comm needs a value" -- "$DKB" run q06 --data "$S" --comm
help=$("$DKB" run --help) || fail "dkb run --help failed"
grep -q -- "--comm C .*mpi (default" <<<"$help" || fail "dkb run --help does not document --comm"
pass "dkb run --help documents --comm"

# ---- --comm mpi is the plain run ----
RUN=(run all --threads 1 --format json --data "$S")
"$DKB" "${RUN[@]}" >"$WORK/plain.json" 2>"$WORK/plain.err" || fail "dkb run all failed: $(head -2 "$WORK/plain.err")"
"$DKB" "${RUN[@]}" --comm mpi >"$WORK/mpi.json" 2>"$WORK/mpi.err" || fail "dkb run all --comm mpi failed"
cmp -s "$WORK/plain.json" "$WORK/mpi.json" || fail "--comm mpi: output differs from the plain run"
cmp -s "$WORK/plain.err" "$WORK/mpi.err" || fail "--comm mpi: stderr differs from the plain run"
pass "--comm mpi: the plain run, byte for byte"

# ---- --comm nccl without its module: refused in one line ----
# (a build without NCCL says so instead; either way before the store is opened)
NCCL_GONE="--comm nccl: (/nowhere/dkb_comm_nccl.so: cannot open shared object file|this dkb was built without NCCL)"
expect_fail 1 "^dkb run: error: $NCCL_GONE" -- \
    env DKB_COMM_NCCL=/nowhere/dkb_comm_nccl.so "$DKB" run q06 --data "$S" --backend cuda --comm nccl
expect_fail 1 "^dkb run: error: $NCCL_GONE" -- \
    env DKB_COMM_NCCL=/nowhere/dkb_comm_nccl.so "$DKB" run q06 --data "$WORK/missing" --backend cuda --comm nccl

# ---- under mpirun ----
if ! command -v mpirun >/dev/null; then
    pass "mpirun not installed: the runs across ranks left out (ranks.sh skips too)"
    exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1
MPI=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" mpirun -q --oversubscribe)
rc=0
"${MPI[@]}" -np 2 "$DKB" "${RUN[@]}" --comm mpi >"$WORK/out.json" 2>"$WORK/err" || rc=$?
if [ "$rc" != 0 ] && grep -q "built without MPI" "$WORK/err"; then
    pass "this dkb was built without MPI: the runs across ranks left out: $(head -1 "$WORK/err")"
    exit 0
fi
[ "$rc" = 0 ] || fail "mpirun -np 2 dkb run all --comm mpi exited $rc: $(head -2 "$WORK/err")"
cmp -s "$WORK/out.json" "$WORK/plain.json" || fail "mpirun -np 2 --comm mpi: output differs from the plain run"
[ "$(grep -c '^dkb run: q[0-9]* on 2 ranks: 4 partitions split over the ranks, .* of partials gathered$' "$WORK/err")" = 22 ] ||
    fail "mpirun -np 2 --comm mpi: not 22 split lines (gathered through MPI): $(head -2 "$WORK/err")"
pass "mpirun -np 2 --comm mpi: the plain run, byte for byte, 22 queries split"

# the NCCL module missing on every rank: one line, from rank 0
rc=0
"${MPI[@]}" -np 2 -x DKB_COMM_NCCL=/nowhere/dkb_comm_nccl.so "$DKB" run q06 --data "$S" --backend cuda --comm nccl \
    >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 1 ] || fail "mpirun -np 2 --comm nccl without the module exited $rc: $(cat "$WORK/err")"
[ ! -s "$WORK/out" ] || fail "mpirun -np 2 --comm nccl without the module printed on stdout"
[ "$(wc -l <"$WORK/err")" = 1 ] && grep -Eq "^dkb run: error: $NCCL_GONE" "$WORK/err" ||
    fail "mpirun -np 2 --comm nccl without the module: $(cat "$WORK/err")"
pass "mpirun -np 2 --comm nccl without the module: $(cat "$WORK/err")"
