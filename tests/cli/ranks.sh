# ranks.sh: `mpirun -np K dkb run` (docs/distributed.md) on the CPU backend.
# At SF 0.01 and SF 0.1 (stores of 8 partitions), on 2 and on 3 ranks (8
# partitions over 3 ranks: an uneven split), without and with a memory
# budget that makes the ranks run their partitions in several runs, `dkb
# run all` for seeds 0..5 must match every golden answer
# (tests/answers/sfSF, as golden.sh checks) and print, byte for byte, the
# JSON the one-process run prints; the partitions must really be split
# (rank 0's line on stderr). Also: more ranks than partitions (a store of
# one partition on 3 ranks: two ranks run none), mpirun -np 1, and bad
# input: a store missing on one rank and ranks with different stores stop
# every rank with one line naming the rank and the path; a run started by
# mpirun whose MPI module cannot be loaded is refused in one line, and so is
# any other command than dkb run on several ranks.
# Exits 77 (skipped) only when mpirun is not installed.
source "$(dirname "$0")/lib/common.bash"

command -v mpirun >/dev/null || { echo "skip: mpirun not found (Debian: openmpi-bin libopenmpi-dev)"; exit 77; }
# root (containers, CI): Open MPI refuses to start without these
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# one node: shared memory only (MPI_Init then skips probing UCX and the network, 0.2 s a launch)
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
# more ranks than cores: a rank waiting in a collective yields the core to the ones computing
export OMPI_MCA_mpi_yield_when_idle=1
# -q: no banner of mpirun's own when a rank exits non-zero (dkb's line is the message)
# A sanitized dkb under mpirun: no leak check at exit, since Open MPI leaves
# allocations of its plugins, which it has unloaded by then (unattributable,
# so not suppressible); ASan and UBSan still check everything else, and
# tests/unit/test_dist_ranks.c runs the same gathers with leak checks.
MPI=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" mpirun -q --oversubscribe)
RUN=(run all --threads 1 --format json)

# errors FILE: the first two lines of a run's stderr that are not its split notes (never fails)
errors() { { grep -v ' ranks: ' "$1" || true; } | head -2 | tr '\n' ' '; }

ANS=$(cd "$(dirname "$0")/../answers" 2>/dev/null && pwd) || fail "tests/answers is missing"
SEEDS="0 1 2 3 4 5"
# above every query's resident tables + largest partition (506595 and
# 5060546 bytes, q01's), below q01's two partitions (571710, 5714820): rank
# 0 runs its lineitem share in at least two runs even on 3 ranks
declare -A BUDGET=([0.01]=540000 [0.1]=5400000)
for sf in 0.01 0.1; do
    "$DKB" gen --sf "$sf" --partitions 8 --out "$WORK/sf$sf" -q || fail "dkb gen --sf $sf --partitions 8 failed"
done
"$DKB" gen --sf 0.01 --out "$WORK/one" -q || fail "dkb gen --sf 0.01 failed"
"$DKB" gen --sf 0.01 --partitions 4 --out "$WORK/other" -q || fail "dkb gen --sf 0.01 --partitions 4 failed"
pass "stores: SF 0.01 and 0.1 with 8 partitions, SF 0.01 with 1 and with 4"

# the one-process runs: the goldens, and the JSON every rank count must print
failures=()
for sf in 0.01 0.1; do
    for s in $SEEDS; do
        "$DKB" "${RUN[@]}" --data "$WORK/sf$sf" --seed "$s" --expect-dir "$ANS/sf$sf" >"$WORK/plain-$sf-$s.json" ||
            fail "one process: SF $sf seed $s does not match the goldens"
        [ "$(grep -o '"ok": true' "$WORK/plain-$sf-$s.json" | wc -l)" = 22 ] ||
            fail "one process: SF $sf seed $s: not 22 checks ok"
    done
done
pass "one process: 22 queries x 6 seeds x 2 SFs match the goldens"

checked=0
for sf in 0.01 0.1; do
    for np in 2 3; do
        for budget in "" "${BUDGET[$sf]}"; do
            what="SF $sf, $np ranks${budget:+, --mem-budget $budget}"
            for s in $SEEDS; do
                rc=0
                "${MPI[@]}" -np "$np" "$DKB" "${RUN[@]}" --data "$WORK/sf$sf" --seed "$s" --expect-dir "$ANS/sf$sf" \
                    ${budget:+--mem-budget "$budget"} >"$WORK/out.json" 2>"$WORK/err" || rc=$?
                [ "$rc" = 0 ] || { failures+=("$what, seed $s: exit $rc: $(errors "$WORK/err")"); continue; }
                cmp -s "$WORK/out.json" "$WORK/plain-$sf-$s.json" ||
                    { failures+=("$what, seed $s: output differs from the one-process run"); continue; }
                n=$(grep -c "^dkb run: q[0-9]* on $np ranks: 8 partitions split over the ranks, rank 0 runs 0-[0-9]" "$WORK/err" || true)
                [ "$n" = 22 ] || { failures+=("$what, seed $s: $n of 22 queries say they were split: $(head -1 "$WORK/err")"); continue; }
                if [ -n "$budget" ]; then
                    # rank 0's lineitem share does not fit: at least two runs of partitions
                    grep -q "^dkb run: q01 on $np ranks: .* in [2-9] runs per pass.*--mem-budget" "$WORK/err" ||
                        { failures+=("$what, seed $s: q01 ran in one run per rank: $(grep q01 "$WORK/err" || true)"); continue; }
                fi
                checked=$((checked + 22))
            done
            pass "$what: seeds ${SEEDS// /,}"
        done
    done
done
for m in "${failures[@]}"; do echo "FAIL: $m" >&2; done
[ "${#failures[@]}" = 0 ] || fail "${#failures[@]} runs across ranks failed"
[ "$checked" = 1056 ] || fail "checked $checked answers, expected 1056 (22 x 6 seeds x 2 SFs x 2 rank counts x 2 budgets)"
pass "1056 answers across ranks equal the goldens and the one-process output"

# more ranks than partitions: ranks 0 and 1 run none (empty partials)
"$DKB" "${RUN[@]}" --data "$WORK/one" --expect-dir "$ANS/sf0.01" >"$WORK/plain-one.json" || fail "one partition: one process"
"${MPI[@]}" -np 3 "$DKB" "${RUN[@]}" --data "$WORK/one" --expect-dir "$ANS/sf0.01" >"$WORK/out.json" 2>"$WORK/err" ||
    fail "one partition on 3 ranks failed: $(head -2 "$WORK/err")"
cmp -s "$WORK/out.json" "$WORK/plain-one.json" || fail "one partition on 3 ranks: output differs from one process"
[ "$(grep -c 'on 3 ranks: 1 partition split over the ranks, rank 0 runs none' "$WORK/err")" = 22 ] ||
    fail "one partition on 3 ranks: rank 0 ran a partition: $(head -1 "$WORK/err")"
pass "a store of one partition on 3 ranks (two ranks without partitions): the goldens, as one process"

# mpirun -np 1: the MPI communicator of one rank is the plain run
"${MPI[@]}" -np 1 "$DKB" "${RUN[@]}" --data "$WORK/sf0.1" --expect-dir "$ANS/sf0.1" >"$WORK/out.json" 2>"$WORK/err" ||
    fail "mpirun -np 1 failed: $(head -2 "$WORK/err")"
cmp -s "$WORK/out.json" "$WORK/plain-0.1-0.json" || fail "mpirun -np 1: output differs from the plain run"
[ ! -s "$WORK/err" ] || fail "mpirun -np 1 wrote on stderr: $(head -2 "$WORK/err")"
pass "mpirun -np 1: the plain run"

# bad input: stop every rank, one line naming the rank and the path, nothing on stdout
# mpmd PATH0 PATH1 CMD...: rank 0 runs CMD on store PATH0, rank 1 on PATH1
mpmd() {
    local a=$1 b=$2
    shift 2
    "${MPI[@]}" -np 1 "$DKB" "$@" --data "$a" : -np 1 "$DKB" "$@" --data "$b"
}
# expect_rank_fail PATTERN CMD...: exit 1, nothing on stdout, one stderr line matching PATTERN
expect_rank_fail() {
    local pattern=$1 rc=0
    shift
    "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
    [ "$rc" = 1 ] || fail "'$*' exited $rc, expected 1: $(cat "$WORK/err")"
    [ ! -s "$WORK/out" ] || fail "'$*' printed on stdout: $(head -2 "$WORK/out")"
    [ "$(wc -l <"$WORK/err")" = 1 ] || fail "'$*': not one line on stderr: $(cat "$WORK/err")"
    grep -Eq -- "$pattern" "$WORK/err" || fail "'$*': stderr does not match '$pattern': $(cat "$WORK/err")"
    pass "$(cat "$WORK/err")"
}
expect_rank_fail "^dkb run: error: rank 1: store $WORK/missing/manifest.json: cannot open: No such file" \
    mpmd "$WORK/sf0.01" "$WORK/missing" run q06 --threads 1
expect_rank_fail "^dkb run: error: rank 0: store $WORK/missing/manifest.json: cannot open" \
    mpmd "$WORK/missing" "$WORK/sf0.01" run q06 --threads 1
expect_rank_fail "^dkb run: error: rank 1: store $WORK/other is not rank 0's \(manifest crc32 0x[0-9a-f]+, rank 0 has 0x[0-9a-f]+\)" \
    mpmd "$WORK/sf0.01" "$WORK/other" run q06 --threads 1
# an error every rank has (a budget too small): said once, without a rank
expect_rank_fail "^dkb run: error: q01: --mem-budget 1 bytes is too small: it needs at least .* \(seed 0\)$" \
    "${MPI[@]}" -np 2 "$DKB" run q01 --data "$WORK/sf0.01" --threads 1 --mem-budget 1
# started by mpirun, the MPI module missing: refused before anything runs
expect_fail 1 "^dkb run: .*started by mpirun .* the MPI communicator cannot be loaded: .*/nowhere/dkb_comm_mpi.so" -- \
    env OMPI_COMM_WORLD_SIZE=2 DKB_COMM_MPI=/nowhere/dkb_comm_mpi.so "$DKB" run q06 --data "$WORK/sf0.01"
# every other command under mpirun: refused (it would run whole on every rank), said once
rc=0
"${MPI[@]}" -np 2 "$DKB" gen --sf 0.01 --out "$WORK/twice" -q >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 2 ] || fail "mpirun -np 2 dkb gen exited $rc, expected 2: $(cat "$WORK/err")"
[ "$(wc -l <"$WORK/err")" = 1 ] && grep -q "^dkb: dkb gen was started by mpirun (2 ranks): only dkb run, dkb eval and dkb bench run across ranks" "$WORK/err" ||
    fail "mpirun -np 2 dkb gen: $(cat "$WORK/err")"
[ ! -e "$WORK/twice" ] || fail "mpirun -np 2 dkb gen wrote $WORK/twice"
pass "mpirun -np 2 dkb gen: $(cat "$WORK/err")"
pass "bad input across ranks: one line each"
