# gen_store_edges.sh: edge cases of gen/import/export found in review:
# scale factors outside dbgen's range, table lists with blanks and capitals,
# --partitions larger than a table, export onto a file, CRLF .tbl input.
source "$(dirname "$0")/lib/common.bash"

# Below 0.001 dbgen's scale is 0 (every table 1 row): refused up front, for
# both formats, as a usage error naming the limit.
for sf in 0.0001 0.0009 1e-9; do
    expect_fail 2 "below the smallest scale factor, 0.001" -- "$DKB" gen --sf $sf --table region --out "$WORK/a"
    expect_fail 2 "below the smallest scale factor, 0.001" -- "$DKB" gen --sf $sf --format tbl --table region --out "$WORK/a"
done
expect_fail 2 "above the largest scale factor, 100000" -- "$DKB" gen --sf 100001 --table region --out "$WORK/a"
[ ! -e "$WORK/a" ] || fail "a refused gen left $WORK/a"
ls "$WORK" | grep -q "\.tmp\." && fail "temporary directories left: $(ls "$WORK")"
"$DKB" gen --sf 0.001 -q --table region --out "$WORK/min"
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scale_factor"])' "$WORK/min/manifest.json")" = 0.001 ] \
    || fail "--sf 0.001 store does not record scale factor 0.001"
pass "scale factor range"

# --table: blanks around names and capitals are accepted; duplicates are one table.
"$DKB" gen --sf 0.001 -q --format tbl --table " LINEITEM , Orders,lineitem" --out "$WORK/tl"
[ "$(ls "$WORK/tl" | tr '\n' ' ')" = "lineitem.tbl orders.tbl " ] || fail "--table list: $(ls "$WORK/tl")"
expect_fail 2 "unknown table 'foo'" -- "$DKB" gen --sf 0.001 --table "region, foo" --out "$WORK/a"
pass "--table list"

# --partitions P larger than a table's rows: every table still has exactly P
# partitions (docs/store.md), in gen as in import, and the store round-trips.
"$DKB" gen --sf 0.001 -q --format tbl --out "$WORK/p-tbl"
"$DKB" gen --sf 0.001 -q --partitions 300 --out "$WORK/p-gen"
"$DKB" import "$WORK/p-tbl" -q --partitions 300 --out "$WORK/p-imp"
python3 - "$WORK/p-gen/manifest.json" "$WORK/p-imp/manifest.json" <<'PY' || fail "partition counts"
import json, sys
g, i = (json.load(open(p)) for p in sys.argv[1:3])
for tg, ti in zip(g["tables"], i["tables"]):
    assert len(tg["partitions"]) == 300, (tg["name"], len(tg["partitions"]))
    assert len(ti["partitions"]) == 300, (ti["name"], len(ti["partitions"]))
    assert sum(p["rows"] for p in tg["partitions"]) == tg["rows"], tg["name"]
    if tg["name"] != "partsupp":  # gen keeps a part's 4 rows together
        assert tg["partitions"] == ti["partitions"], tg["name"]
go = {t["name"]: t for t in g["tables"]}
for a, b in zip(go["orders"]["partitions"], go["lineitem"]["partitions"]):
    assert (a["key_min"], a["key_max"]) == (b["key_min"], b["key_max"]), (a, b)
PY
"$DKB" info "$WORK/p-gen" --verify >/dev/null || fail "info --verify on a 300-partition store"
"$DKB" export "$WORK/p-gen" -q --out "$WORK/p-out"
diff -r "$WORK/p-out" "$WORK/p-tbl" >/dev/null || fail "300-partition store does not export as generated"
pass "--partitions larger than tables"

# export --out onto a regular file, or below one: says so; a failed export
# leaves no directory it created.
"$DKB" gen --sf 0.001 -q --table region --out "$WORK/st"
: >"$WORK/file"
expect_fail 1 "file: exists and is not a directory" -- "$DKB" export "$WORK/st" --out "$WORK/file"
expect_fail 1 "file: exists and is not a directory" -- "$DKB" export "$WORK/st" --out "$WORK/file" --force
expect_fail 1 "file/sub: .*Not a directory" -- "$DKB" export "$WORK/st" --out "$WORK/file/sub"
cp -r "$WORK/st" "$WORK/st-bad"
printf '\377\377\377\177' | dd of="$WORK/st-bad/region/r_comment.off" bs=1 seek=8 conv=notrunc 2>/dev/null
expect_fail 1 "r_comment" -- "$DKB" export "$WORK/st-bad" -q --out "$WORK/new-out"
[ ! -e "$WORK/new-out" ] || fail "a failed export left the directory it created"
pass "export output directory"

# CRLF line endings: named as such, not as an extra field.
mkdir -p "$WORK/crlf"
cp "$WORK/p-tbl"/*.tbl "$WORK/crlf/"
sed -i 's/$/\r/' "$WORK/crlf/nation.tbl"
expect_fail 1 "nation.tbl:1: .*CRLF" -- "$DKB" import "$WORK/crlf" -q --out "$WORK/crlf-store"
[ ! -e "$WORK/crlf-store" ] || fail "a failed import left its store"
pass "CRLF input"
