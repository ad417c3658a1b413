# gen_errors.sh: bad `dkb gen` input gets one clear line and a non-zero exit,
# and leaves nothing behind.
source "$(dirname "$0")/lib/common.bash"

expect_fail 2 "scale factor must be positive" -- "$DKB" gen --sf -1 --out "$WORK/a"
expect_fail 2 "scale factor must be positive" -- "$DKB" gen --sf 0 --out "$WORK/a"
expect_fail 2 "not a number" -- "$DKB" gen --sf abc --out "$WORK/a"
expect_fail 2 "unknown table 'lineitems'" -- "$DKB" gen --sf 0.01 --table lineitems --out "$WORK/a"
expect_fail 2 "expected store or tbl" -- "$DKB" gen --sf 0.01 --format parquet --out "$WORK/a"
expect_fail 2 "--part 3 is larger than --parts 2" -- "$DKB" gen --sf 0.01 --part 3 --parts 2 --out "$WORK/a"
expect_fail 2 "unknown command 'generate'" -- "$DKB" generate
[ ! -e "$WORK/a" ] || fail "a failed gen left $WORK/a"

mkdir -p "$WORK/full"
echo keep >"$WORK/full/precious.txt"
expect_fail 1 "not empty.*--force" -- "$DKB" gen --sf 0.01 --format tbl --table region --out "$WORK/full"
[ "$(cat "$WORK/full/precious.txt")" = keep ] || fail "existing directory was touched"
"$DKB" gen --sf 0.01 --format tbl --table region --out "$WORK/full" --force -q
[ -f "$WORK/full/region.tbl" ] && [ ! -e "$WORK/full/precious.txt" ] || fail "--force did not replace"
pass "--force replaces a non-empty directory"
ls "$WORK" | grep -q tmp && fail "temporary directories left: $(ls "$WORK")"

help=$("$DKB" gen --help) && grep -q "usage: dkb gen" <<<"$help" || fail "gen --help"
help=$("$DKB" --help) && grep -q "commands:" <<<"$help" || fail "--help"
pass "help"

# A full disk (simulated by a file-size limit: writes fail with EFBIG):
# one error line naming the file, exit 1, nothing left behind.
(ulimit -f 512; expect_fail 1 "lineitem.tbl.*(write failed|too large|space)" -- \
    "$DKB" gen --sf 0.01 --format tbl --table lineitem --out "$WORK/disk")
[ ! -e "$WORK/disk" ] || fail "a failed gen left $WORK/disk"
ls "$WORK" | grep -q tmp && fail "temporary directories left after a full disk: $(ls "$WORK")"
(ulimit -f 512; expect_fail 1 "l_comment|lineitem|too large|space" -- \
    "$DKB" gen --sf 0.01 --table lineitem --out "$WORK/disk-store")
[ ! -e "$WORK/disk-store" ] || fail "a failed store gen left $WORK/disk-store"
ls "$WORK" | grep -q tmp && fail "temporary directories left after a full store disk: $(ls "$WORK")"
pass "full disk"
