# gen_tbl.sh: `dkb gen --format tbl` is byte-identical to dbgen at SF 0.01,
# whatever the thread count, and slices concatenate to the whole.
source "$(dirname "$0")/lib/common.bash"

"$DKB" gen --sf 0.01 --format tbl --out "$WORK/j2" -j 2 -q
check_hashes 0.01 "$WORK/j2"

"$DKB" gen --sf 0.01 --format tbl --out "$WORK/j1" -j 1 -q
diff -r "$WORK/j1" "$WORK/j2" >/dev/null || fail "-j 1 and -j 2 outputs differ"
pass "-j 1 == -j 2"

# Slices: 3 parts concatenate to the whole table; nation/region whole in each.
for k in 1 2 3; do
    "$DKB" gen --sf 0.01 --format tbl --out "$WORK/p$k" --part $k --parts 3 -q
done
for t in part partsupp supplier customer orders lineitem; do
    cat "$WORK"/p1/$t.tbl.1 "$WORK"/p2/$t.tbl.2 "$WORK"/p3/$t.tbl.3 | cmp -s - "$WORK/j2/$t.tbl" ||
        fail "$t: parts 1..3 do not concatenate to the whole table"
done
for k in 1 2 3; do cmp -s "$WORK/p$k/nation.tbl" "$WORK/j2/nation.tbl" || fail "nation in part $k"; done
pass "--part K --parts 3 slices concatenate to the whole"

# One table only.
"$DKB" gen --sf 0.01 --format tbl --table lineitem,region --out "$WORK/one" -q
[ "$(ls "$WORK/one" | sort | tr '\n' ' ')" = "lineitem.tbl region.tbl " ] || fail "--table wrote $(ls "$WORK/one")"
cmp -s "$WORK/one/lineitem.tbl" "$WORK/j2/lineitem.tbl" || fail "--table lineitem differs"
pass "--table lineitem,region"

# Other scale factors: row counts as dbgen's rules (SF 0.002 -> base*2/1000).
"$DKB" gen --sf 0.002 --format tbl --out "$WORK/sf0002" -q
[ "$(wc -l <"$WORK/sf0002/customer.tbl")" = 300 ] || fail "SF 0.002 customer rows"
[ "$(wc -l <"$WORK/sf0002/orders.tbl")" = 3000 ] || fail "SF 0.002 orders rows"
[ "$(wc -l <"$WORK/sf0002/partsupp.tbl")" = 1600 ] || fail "SF 0.002 partsupp rows"
# The nation table does not depend on the scale factor.
cmp -s "$WORK/sf0002/nation.tbl" "$WORK/j2/nation.tbl" || fail "nation differs across SF"
pass "SF 0.002 row counts"
