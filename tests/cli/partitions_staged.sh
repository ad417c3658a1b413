# partitions_staged.sh: tests/cli/partitions.sh (every query under two
# small budgets, seeds 0..5, byte-identical to the unpartitioned run and
# equal to the goldens) on the CPU backend with DKB_PARTITION_STAGING=host:
# the runs of partitions go through the streaming path CUDA uses
# (src/queries/stream.c: the plan of runs and two slots, the pipeline's
# order, the stager thread, staging buffers, text offsets rebased, slots
# reused), with the host-memory device in place of CUDA's primitives
# (src/tensor/cuda_stream.cu is the only part it does not run). Also: the
# "streamed:" line of every partitioned run reports the bytes copied and
# two device buffers (docs/partitions.md, "CUDA streaming").
source "$(dirname "$0")/lib/common.bash"

export DKB_PARTITION_STAGING=host
D="$WORK/sf0.1p8s"
"$DKB" gen --sf 0.1 --partitions 8 --out "$D" -q || fail "dkb gen --sf 0.1 --partitions 8 failed"
# the stream line: q13 (text: o_comment) under 2 x its largest partition
err=$("$DKB" run q13 --data "$D" --mem-budget 1 2>&1 >/dev/null) || true
re="\(([0-9]+) bytes: resident tables ([0-9]+) \+ the largest partition of [a-z]+( and [a-z]+)? ([0-9]+)\)"
[[ $err =~ $re ]] || fail "q13: no too-small message: $err"
budget=$((BASH_REMATCH[2] + 2 * BASH_REMATCH[4]))
"$DKB" run q13 --data "$D" --mem-budget "$budget" --format csv >"$WORK/q13.csv" 2>"$WORK/q13.err" ||
    fail "q13 --mem-budget $budget failed: $(head -2 "$WORK/q13.err")"
grep -Eq "^dkb run: q13 streamed: [1-9][0-9]* bytes in 8 loads through 2 device buffers of [0-9]+ bytes; copies " \
    "$WORK/q13.err" || fail "q13: no streamed line for 8 loads through 2 buffers: $(cat "$WORK/q13.err")"
"$DKB" run q13 --data "$D" --format csv >"$WORK/q13.plain.csv" || fail "q13 plain run failed"
cmp -s "$WORK/q13.csv" "$WORK/q13.plain.csv" || fail "q13 streamed through host staging differs from the plain run"
pass "q13 streamed in 8 loads through 2 buffers, same csv as the plain run"
DKB_TMP="$WORK" bash "$(dirname "$0")/partitions.sh" || fail "partitions.sh with DKB_PARTITION_STAGING=host failed"
pass "partitions.sh through the host staging path"
