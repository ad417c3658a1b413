# store_errors.sh: corrupted, truncated or malformed inputs give one clear
# line naming the file (and row and field), exit 1, and nothing half-written.
source "$(dirname "$0")/lib/common.bash"

"$DKB" gen --sf 0.01 --out "$WORK/store" -q
cp -r "$WORK/store" "$WORK/trunc"
truncate -s -8 "$WORK/trunc/lineitem/l_extendedprice.i64"
expect_fail 1 "l_extendedprice" -- "$DKB" info "$WORK/trunc"

cp -r "$WORK/store" "$WORK/flip"
printf '\x7f' | dd of="$WORK/flip/orders/o_totalprice.i64" bs=1 seek=100 conv=notrunc 2>/dev/null
"$DKB" info "$WORK/flip" >/dev/null || fail "size-only open should still succeed"
expect_fail 1 "o_totalprice.*(crc|checksum)" -- "$DKB" info "$WORK/flip" --verify
expect_fail 1 "o_totalprice.*(crc|checksum)" -- "$DKB" export "$WORK/flip" --verify --format tbl --out "$WORK/x"
[ ! -e "$WORK/x/orders.tbl" ] || fail "export of a corrupt store wrote orders.tbl"

expect_fail 1 "manifest" -- "$DKB" info "$WORK/nonexistent"
mkdir -p "$WORK/badjson" && echo '{"format": "dkb-store", "format_version": 1, ' >"$WORK/badjson/manifest.json"
expect_fail 1 "manifest.json" -- "$DKB" info "$WORK/badjson"
cp -r "$WORK/store" "$WORK/ver"
sed -i 's/"format_version":[[:space:]]*1,/"format_version": 99,/' "$WORK/ver/manifest.json"
expect_fail 1 "version" -- "$DKB" info "$WORK/ver"

# Malformed .tbl rows: file, line and field named; no store left behind.
"$DKB" gen --sf 0.01 --format tbl --out "$WORK/tbl" -q
bad() { # NAME AWK-PROGRAM TABLE PATTERN: the program edits '|'-split fields
    rm -rf "$WORK/bad"; cp -r "$WORK/tbl" "$WORK/bad"
    awk -F'|' -v OFS='|' "$2" "$WORK/tbl/$3.tbl" >"$WORK/bad/$3.tbl"
    expect_fail 1 "$4" -- "$DKB" import "$WORK/bad" --out "$WORK/bad-store"
    [ ! -e "$WORK/bad-store" ] || fail "$1: a failed import left a store"
}
bad "column count" 'NR == 17 {NF = NF - 2; $0 = $0 "|"} 1' lineitem 'lineitem.tbl:17: .*field'
bad "bad date" 'NR == 5 {$5 = "1996-13-45"} 1' orders 'orders.tbl:5: field 5 \(o_orderdate\)'
bad "non-numeric" 'NR == 3 {$1 = "x" $1} 1' customer 'customer.tbl:3: field 1 \(c_custkey\)'
bad "decimal" 'NR == 9 {$6 = "12.345"} 1' lineitem 'lineitem.tbl:9: field 6 \(l_extendedprice\)'
rm -rf "$WORK/bad"; cp -r "$WORK/tbl" "$WORK/bad"; rm "$WORK/bad/region.tbl"
expect_fail 1 "region.tbl" -- "$DKB" import "$WORK/bad" --out "$WORK/bad-store"
ls "$WORK" | grep -q "\.tmp\." && fail "temporary directories left: $(ls "$WORK")"
expect_fail 2 "missing --out" -- "$DKB" import "$WORK/tbl"
expect_fail 2 "only tbl" -- "$DKB" export "$WORK/store" --format csv --out "$WORK/y"
for c in import export info; do help=$("$DKB" $c --help) && grep -q "usage: dkb $c" <<<"$help" || fail "$c --help"; done
pass "help"

# Partial imports that cannot work say why.
"$DKB" gen --sf 0.01 --format tbl --table lineitem --out "$WORK/li" -q
expect_fail 1 "cannot infer the scale factor.*--sf" -- "$DKB" import "$WORK/li" --table lineitem --out "$WORK/li-st"
expect_fail 1 "partitioning lineitem needs orders" -- "$DKB" import "$WORK/li" --table lineitem --sf 0.01 --partitions 2 --out "$WORK/li-st"
expect_fail 2 "unknown table 'lineitems'" -- "$DKB" import "$WORK/li" --table lineitems --out "$WORK/li-st"
[ ! -e "$WORK/li-st" ] || fail "a refused import left a store"
