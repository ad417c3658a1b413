# gen_columns.sh: `dkb gen --columns` (a store of some columns only, for
# scale factors whose whole data set does not fit; issue 15 item 5). At SF
# 0.01 with 4 partitions, `--columns queries` writes exactly the 53 columns
# the 22 queries read (src/queries/referenced.c) and every one of them then
# runs on it: the baseline plans for seeds 0..5 equal the goldens, each
# query partitioned under the smallest budget it accepts equals the golden
# of seed 0, and the 22 C experts pass `dkb eval` (seed 0 + 2 random
# seeds) — so the list misses nothing any of them reads. Also: the store
# verifies, `dkb info` says it is a subset, `dkb export` refuses it, a
# query that needs a column left out fails in one line naming it, the
# columns a user names are the ones written, and bad lists are usage errors.
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ANSWERS="$ROOT/tests/answers/sf0.01"
export DKB_CANDIDATE_H="${DKB_CANDIDATE_H:-$ROOT/include/dkb/candidate.h}"

# ---- command line ----
expect_fail 2 "--columns l_nosuch: unknown column 'l_nosuch'" -- "$DKB" gen --sf 0.01 --columns l_nosuch --out "$WORK/x"
expect_fail 2 "--columns: no column named" -- "$DKB" gen --sf 0.01 --columns " , " --out "$WORK/x"
expect_fail 2 "--columns and --table exclude each other" -- "$DKB" gen --sf 0.01 --columns queries --table part --out "$WORK/x"
expect_fail 2 "--columns applies to the store format only" -- "$DKB" gen --sf 0.01 --columns queries --format tbl --out "$WORK/x"
[ -e "$WORK/x" ] && fail "a refused command line wrote $WORK/x"
help=$("$DKB" gen --help) && grep -q -- "--columns LIST" <<<"$help" || fail "gen --help lacks --columns"
pass "command line"

# ---- a store of the columns the queries read ----
S="$WORK/sf001q"
"$DKB" gen --sf 0.01 --columns queries --partitions 4 --out "$S" -q
"$DKB" gen --sf 0.01 --partitions 4 --out "$WORK/full" -q
"$DKB" info "$S" --verify --format json >"$WORK/info.json" || fail "dkb info --verify of the subset store"
python3 - "$WORK/info.json" "$WORK/full" <<'PY' || fail "the subset store's columns"
import json, os, sys
info = json.load(open(sys.argv[1]))
cols = {t["name"]: [c["name"] for c in t["columns"]] for t in info["tables"]}
n = sum(len(v) for v in cols.values())
assert n == 53, f"{n} columns, want 53"
left_out = {"l_linenumber", "l_comment", "o_clerk", "p_retailprice", "p_comment", "ps_comment", "n_comment", "r_comment"}
assert not left_out & {c for v in cols.values() for c in v}, "a column no query reads was written"
assert all(t["column_subset"] for t in info["tables"] if t["name"] not in ("supplier", "customer")), "column_subset flags"
assert not any(t["column_subset"] for t in info["tables"] if t["name"] in ("supplier", "customer")), "whole tables flagged"
full = json.load(open(os.path.join(sys.argv[2], "manifest.json")))
sub_files = {f["path"] for t in json.load(open(os.path.join(os.path.dirname(sys.argv[1]), "sf001q", "manifest.json")))["tables"] for c in t["columns"] for f in c["files"]}
full_files = {f["path"]: f["crc32"] for t in full["tables"] for c in t["columns"] for f in c["files"]}
on_disk = {os.path.relpath(os.path.join(d, f), os.path.join(os.path.dirname(sys.argv[1]), "sf001q"))
           for d, _, fs in os.walk(os.path.join(os.path.dirname(sys.argv[1]), "sf001q")) for f in fs if f != "manifest.json"}
assert on_disk == sub_files, f"files on disk differ from the manifest: {sorted(on_disk ^ sub_files)[:5]}"
sub = json.load(open(os.path.join(os.path.dirname(sys.argv[1]), "sf001q", "manifest.json")))
for t in sub["tables"]:
    for c in t["columns"]:
        for f in c["files"]:
            assert full_files[f["path"]] == f["crc32"], f'{f["path"]}: crc differs from the whole store'
PY
grep -q "part .*(7 of 9 columns)" <<<"$("$DKB" info "$S")" || fail "dkb info does not say part is a subset"
expect_fail 1 "table part holds 7 of its 9 columns \(a column subset\): a .tbl file needs every column" -- \
    "$DKB" export "$S" --out "$WORK/tbl"
pass "53 columns written, each file identical to the whole store's; verifies; info and export"

failures=()
for n in $(seq 1 22); do
    q=$(printf 'q%02d' "$n")
    for s in 0 1 2 3 4 5; do
        "$DKB" run "$q" --data "$S" --seed "$s" --expect "$ANSWERS/$q-s$s.csv" >/dev/null 2>"$WORK/err" ||
            failures+=("$q seed $s: $(head -1 "$WORK/err")")
    done
    err=$("$DKB" run "$q" --data "$S" --mem-budget 1 2>&1 >/dev/null) || true
    need=$(sed -n 's/.*it needs at least [^(]*(\([0-9]*\) bytes.*/\1/p' <<<"$err")
    [ -n "$need" ] || { failures+=("$q: no budget in: $err"); continue; }
    "$DKB" run "$q" --data "$S" --mem-budget "$need" --expect "$ANSWERS/$q-s0.csv" >/dev/null 2>"$WORK/err" ||
        failures+=("$q partitioned under $need bytes: $(grep -v partitioned "$WORK/err" | head -1)")
    grep -q "partitioned: 4 partitions" "$WORK/err" || failures+=("$q: did not run partitioned: $(head -1 "$WORK/err")")
done
for m in "${failures[@]}"; do echo "FAIL: $m" >&2; done
[ "${#failures[@]}" = 0 ] || fail "${#failures[@]} runs on the subset store failed"
pass "the 22 baseline plans on the subset store: seeds 0..5 and partitioned equal the goldens"

"$DKB" eval "$ROOT/src/kernels/cpu" --data "$S" --mode full --seeds 2 --warmup 0 --min-runs 1 --min-seconds 0 \
    --timeout 60 --out "$WORK/results" -q || fail "dkb eval of the C experts exited $?"
python3 - "$WORK/results/results.json" <<'PY' || fail "C experts on the subset store"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["candidates"] if r["mode"] == "full"]
bad = [f'{r["query"]}: {r["class"]}: {r["detail"]}' for r in rows if r["class"] != "ok"]
assert len(rows) == 22, f"{len(rows)} rows"
assert not bad, "; ".join(bad)
PY
pass "the 22 C experts pass on the subset store"

# ---- the columns a user names; a query that needs another ----
"$DKB" gen --sf 0.01 --columns "L_SHIPDATE, l_discount,l_quantity" --out "$WORK/few" -q
got=$("$DKB" info "$WORK/few" --format csv | tail -n +2 | cut -d, -f1,2 | tr '\n' ' ')
[ "$got" = "lineitem,l_quantity lineitem,l_discount lineitem,l_shipdate " ] || fail "named columns: got '$got'"
expect_fail 1 "q06 prepare: store .*few has no column lineitem.l_extendedprice" -- "$DKB" run q06 --data "$WORK/few"
pass "named columns only; a missing column named in one line"
