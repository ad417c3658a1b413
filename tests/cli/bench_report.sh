# bench_report.sh: `dkb bench` on the CPU at SF 0.01 (q01, q06, one random
# seed, quick timing): command-line errors (exit 2), --help, the store
# generated when missing, the per-query table and totals, results.json
# (valid JSON with the bench summary), CSV and JSON output, and report.html
# (self-contained: an inline SVG, no network references, no scripts), which
# is rendered with headless chromium when it is installed. Without chromium
# the render step prints "SKIP render", unless DKB_REQUIRE_BROWSER=1 (CI),
# where a missing browser fails the test. --backend cuda: a one-line error
# without a GPU; on a GPU machine, q01 and q06 run on the GPU and are checked.
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# the experts of the source tree when q01 and q06 are there, else the honest test candidates
EXPERTS="$ROOT/src/kernels/cpu"
EXPERT_OPT=()
if [ ! -f "$EXPERTS/q01.full.c" ] || [ ! -f "$EXPERTS/q06.full.c" ]; then
    EXPERTS="$ROOT/tests/candidates/honest"
    EXPERT_OPT=(--experts "$EXPERTS")
fi
QUICK=(--sf 0.01 --queries q01,q06 --seeds 1 --quick --backend cpu --threads 2)

# ---- command line (exit 2) ----
expect_fail 2 "--backend gpu: expected auto, cpu or cuda" -- "$DKB" bench --backend gpu
expect_fail 2 "--sf 0: scale factor must be positive" -- "$DKB" bench --sf 0
expect_fail 2 "--sf 0.0001: below the smallest scale factor" -- "$DKB" bench --sf 0.0001
expect_fail 2 "--queries: unknown query 'q23'" -- "$DKB" bench --queries q23
expect_fail 2 "--seeds -1: expected an integer" -- "$DKB" bench --seeds -1
expect_fail 2 "--format yaml: expected table, json or csv" -- "$DKB" bench --format yaml
expect_fail 2 "bench: unknown option --frobnicate" -- "$DKB" bench --frobnicate
expect_fail 2 "bench: option --out needs a value" -- "$DKB" bench --out
expect_fail 2 "bench: unexpected argument 'x'" -- "$DKB" bench x
expect_fail 2 "--target cuda: expected triton" -- "$DKB" bench --target cuda
expect_fail 2 "bench: --gpus: the CUDA backend's" -- "$DKB" bench --gpus 2 --backend cpu
expect_fail 2 "--gpus 0: expected an integer" -- "$DKB" bench --gpus 0
expect_fail 2 "bench: --target triton: the CUDA backend's .not --backend cpu." -- "$DKB" bench --target triton --backend cpu
expect_fail 2 "bench: --mem-budget: not with --target triton yet" -- "$DKB" bench --target triton --mem-budget 1G

# ---- --help ----
help=$("$DKB" bench --help) && grep -q "^usage: dkb bench \[--sf SF\]" <<<"$help" || fail "bench --help"
help=$("$DKB" bench -h) && grep -q -- "--experts DIR" <<<"$help" || fail "bench -h"
grep -q -- "--target T " <<<"$help" || fail "bench -h: --target"
help=$("$DKB" --help) && grep -q "^  bench " <<<"$help" || fail "dkb --help lists bench"
pass "--help"

# ---- errors (exit 1) ----
expect_fail 1 "dkb bench: error: --experts .*nodir: not a directory" -- \
    "$DKB" bench "${QUICK[@]}" --experts "$WORK/nodir" --data "$WORK/none" --out "$WORK/r0"
mkdir -p "$WORK/junk" && touch "$WORK/junk/x"
expect_fail 1 "junk: exists but holds no store" -- "$DKB" bench "${QUICK[@]}" --data "$WORK/junk" --out "$WORK/r0"

# ---- the bench: the store is generated (data/sf0.01 under the working directory) ----
cd "$WORK"
out=$("$DKB" bench "${QUICK[@]}" "${EXPERT_OPT[@]}" --out "$WORK/res" 2>"$WORK/err") ||
    fail "bench exit $?: $(cat "$WORK/err")"
echo "$out"
grep -q "generating SF 0.01 into data/sf0.01" "$WORK/err" || fail "no generation note: $(cat "$WORK/err")"
[ -f "$WORK/data/sf0.01/manifest.json" ] || fail "data/sf0.01 was not generated"
grep -Eq "^query +baseline ms +expert ms +speedup +floor ms +time/floor +pass +class" <<<"$out" || fail "table header"
for q in q01 q06; do
    grep -Eq "^$q +[0-9]+\.[0-9]{3} +([0-9]+\.[0-9]{3}|-) +([0-9.]+x|-) +([0-9]+\.[0-9]{3}|-) +([0-9.]+|-) +(yes|no) " <<<"$out" ||
        fail "row $q: $out"
done
grep -Eq "^pass rate [0-9.]+% \([0-9] of 2 experts valid\)" <<<"$out" || fail "pass rate line: $out"
grep -Eq "^overall speedup [0-9.]+x \(baseline [0-9.]+ ms / bench [0-9.]+ ms\); geometric mean [0-9.]+x" <<<"$out" ||
    fail "speedup line: $out"
grep -q "^backend cpu, SF 0.01, 2 threads" <<<"$out" || fail "backend line: $out"
grep -q "^results: $WORK/res/results.json, report: $WORK/res/report.html" <<<"$out" || fail "results line: $out"
pass "table (q01, q06) and totals"

# ---- results.json: valid JSON, the harness's document plus the bench summary ----
python3 -m json.tool "$WORK/res/results.json" >/dev/null || fail "results.json is not valid JSON"
python3 - "$WORK/res/results.json" "$EXPERTS" <<'PY' || fail "results.json contents"
import json, sys
doc = json.load(open(sys.argv[1]))
b = doc["bench"]
assert b["backend"] == "cpu" and b["target"] is None, (b["backend"], b.get("target"))
assert abs(b["scale_factor"] - 0.01) < 1e-9, b["scale_factor"]
assert b["store"] == "data/sf0.01" and b["store_generated"] is True, (b["store"], b["store_generated"])
assert b["experts"] == sys.argv[2], (b["experts"], sys.argv[2])
assert b["quick"] is True and b["command"].startswith("dkb bench --sf 0.01"), b["command"]
qs = [r["query"] for r in b["queries"]]
assert qs == ["q01", "q06"], qs
for r in b["queries"]:
    assert r["baseline_ms"] is not None and r["baseline_ms"] > 0, r
    assert r["pass"] in ("yes", "no"), r
    if r["pass"] == "yes":
        assert r["expert_ms"] > 0 and abs(r["speedup"] - r["baseline_ms"] / r["expert_ms"]) < 1e-6 * r["speedup"], r
t = b["totals"]
assert t["queries"] == 2 and t["experts"] == 2 and t["missing"] == 0, t
assert t["overall_speedup"] > 0 and t["geomean_speedup"] > 0, t
# the harness's document is still there
assert len(doc["candidates"]) == 2 and doc["config"]["modes"] == ["full"], doc["config"]
PY
pass "results.json (bench summary and the harness's rows)"
[ -f "$WORK/res/summary.md" ] || fail "no summary.md"

# ---- report.html: self-contained ----
H="$WORK/res/report.html"
grep -q "<svg" "$H" || fail "report.html has no SVG"
grep -q "1x = baseline" "$H" || fail "report.html chart has no 1x line label"
grep -Eq "<td class=\"l\">q01</td>" "$H" || fail "report.html has no q01 row"
grep -q "overall speedup" "$H" || fail "report.html has no totals"
grep -q "dkb bench --sf 0.01" "$H" || fail "report.html does not show the command"
if grep -Eiq "https?:|<script|<link|<img|@import|url\(" "$H"; then
    fail "report.html refers to something outside itself: $(grep -Eio '.{20}(https?:|<script|<link|<img|@import|url\().{20}' "$H" | head -3)"
fi
pass "report.html: svg, table, totals, command; no network references"

# ---- a second run: the store exists (no generation); CSV and JSON ----
csv=$("$DKB" bench "${QUICK[@]}" "${EXPERT_OPT[@]}" --out "$WORK/res2" --format csv 2>"$WORK/err2") ||
    fail "csv run exit $?: $(cat "$WORK/err2")"
grep -q "generating" "$WORK/err2" && fail "regenerated an existing store"
[ "$(head -1 <<<"$csv")" = "query,class,pass,baseline_ms,expert_ms,speedup,floor_ms,time_floor" ] || fail "csv header: $csv"
[ "$(wc -l <<<"$csv")" = 3 ] || fail "csv rows: $csv"
grep -q "^q06," <<<"$csv" || fail "csv q06: $csv"
"$DKB" bench "${QUICK[@]}" "${EXPERT_OPT[@]}" --queries q06 --out "$WORK/res3" --format json -q >"$WORK/j.json" ||
    fail "json run"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [r["query"] for r in d["bench"]["queries"]]==["q06"]' \
    "$WORK/j.json" || fail "--format json: $(head -c 400 "$WORK/j.json")"
pass "existing store reused; --format csv and json"

# ---- a missing expert: q02 has no file in an empty directory: the baseline stands ----
mkdir -p "$WORK/none-here"
out=$("$DKB" bench "${QUICK[@]}" --queries q06 --experts "$WORK/none-here" --out "$WORK/res4" 2>/dev/null) ||
    fail "missing-expert run exit $?"
grep -Eq "^q06 +[0-9.]+ +- +- +[0-9.]+ +- +- +missing" <<<"$out" || fail "missing row: $out"
grep -q "^overall speedup 1.00x" <<<"$out" || fail "missing row speedup: $out"
pass "missing expert: the baseline stands"

# ---- --backend cuda: a one-line error without a GPU; with one, q01 and q06 on the GPU ----
rc=0
out=$("$DKB" bench --backend cuda --sf 0.01 --queries q01,q06 --seeds 1 --quick --out "$WORK/resc" 2>"$WORK/errc") || rc=$?
if [ "$rc" = 1 ] && grep -q "^dkb bench: error: --backend cuda: no usable GPU" "$WORK/errc"; then
    pass "--backend cuda without a GPU -> exit 1: $(cat "$WORK/errc")"
else
    [ "$rc" = 0 ] || fail "--backend cuda exited $rc: $(cat "$WORK/errc")"
    echo "$out"
    grep -q "^backend cuda " <<<"$out" || fail "--backend cuda: backend line: $out"
    for q in q01 q06; do grep -Eq "^$q +[0-9]+\.[0-9]{3} " <<<"$out" || fail "--backend cuda: row $q: $out"; done
    python3 -c 'import json,sys; b=json.load(open(sys.argv[1]))["bench"]; assert b["backend"]=="cuda" and b["device"], b' \
        "$WORK/resc/results.json" || fail "--backend cuda: results.json bench object"
    pass "--backend cuda on $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bench"]["device"])' "$WORK/resc/results.json")"
fi

# ---- --queries as typed in a shell: blanks, upper case and repeats; a failed bench keeps older results ----
out=$("$DKB" bench "${QUICK[@]}" "${EXPERT_OPT[@]}" --queries 'Q06, q06 ,q06' --out "$WORK/res5" --format csv -q) ||
    fail "--queries 'Q06, q06 ,q06' exit $?"
[ "$(printf '%s\n' "$out" | grep -c '^q06,')" = 1 ] || fail "--queries with blanks/repeats: $out"
cp "$WORK/res5/results.json" "$WORK/res5.before"
expect_fail 1 "dkb bench: error: .*junk: exists but holds no store" -- \
    "$DKB" bench "${QUICK[@]}" --data "$WORK/junk" --out "$WORK/res5" -q
cmp -s "$WORK/res5/results.json" "$WORK/res5.before" || fail "a failed bench changed the older results.json"
pass "--queries with blanks, upper case and repeats; a failed bench keeps older results"

# ---- render in a real browser (headless chromium) ----
BROWSER=""
for b in chromium chromium-browser; do
    if command -v "$b" >/dev/null 2>&1; then BROWSER=$b; break; fi
done
if [ -z "$BROWSER" ]; then
    [ "${DKB_REQUIRE_BROWSER:-0}" = 1 ] && fail "DKB_REQUIRE_BROWSER=1 but neither chromium nor chromium-browser is installed"
    echo "SKIP render: chromium is not installed (apt-get install chromium; DKB_REQUIRE_BROWSER=1 makes this a failure)"
    exit 0
fi
PNG="$WORK/report.png"
timeout 180 "$BROWSER" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --user-data-dir="$WORK/chromium-profile" --screenshot="$PNG" --window-size=1200,900 "file://$H" \
    >"$WORK/chromium.log" 2>&1 || fail "$BROWSER exited $?: $(tail -5 "$WORK/chromium.log")"
[ -s "$PNG" ] || fail "$BROWSER wrote no screenshot: $(tail -5 "$WORK/chromium.log")"
# a PNG of the window's size, not one colour: decode it (zlib, PNG row filters)
python3 - "$PNG" 1200 900 <<'PY' || fail "screenshot $PNG looks blank or wrong"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR": hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT": idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = hdr
assert (w, h) == (int(sys.argv[2]), int(sys.argv[3])), f"size {w}x{h}"
assert depth == 8 and ctype in (2, 6) and interlace == 0, f"unexpected PNG format depth {depth} type {ctype}"
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, nonwhite = bytearray(stride), set(), 0
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp * 4):   # every 4th pixel is plenty
        px = bytes(line[x:x + 3])
        colours.add(px)
        nonwhite += px != b"\xff\xff\xff"
    prev = line
print(f"screenshot {w}x{h}: {len(colours)} colours, {nonwhite} sampled pixels not white")
assert len(colours) >= 3, f"only {len(colours)} colours: blank page"
assert nonwhite >= 500, f"only {nonwhite} sampled pixels drawn"
PY
pass "report.html renders in $BROWSER ($(stat -c %s "$PNG") byte PNG)"
