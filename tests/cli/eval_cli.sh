# eval_cli.sh: `dkb eval`: command-line errors (exit 2), harness errors
# (exit 1: store, candidate or results directory), --help, an empty
# directory, and a small real evaluation (an honest Q6, a compile error, a
# missing query) whose reports (results.json, summary.md, table, JSON, CSV)
# are checked.
source "$(dirname "$0")/lib/common.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q
mkdir -p "$WORK/empty"
E="$WORK/empty"

# ---- command line (exit 2) ----
expect_fail 2 "eval: missing DIR" -- "$DKB" eval --data "$S"
expect_fail 2 "eval: missing --data STORE" -- "$DKB" eval "$E"
expect_fail 2 "unexpected argument 'x'" -- "$DKB" eval "$E" x --data "$S"
expect_fail 2 "--mode fast: expected full, core or all" -- "$DKB" eval "$E" --data "$S" --mode fast
expect_fail 2 "--backend gpu: expected cpu or cuda" -- "$DKB" eval "$E" --data "$S" --backend gpu
expect_fail 2 "--build-jobs 0: expected an integer" -- "$DKB" eval "$E" --data "$S" --build-jobs 0
expect_fail 2 "--gpus 0: expected an integer" -- "$DKB" eval "$E" --data "$S" --gpus 0
expect_fail 2 "eval: --gpus: the CUDA backend's" -- "$DKB" eval "$E" --data "$S" --gpus 2
expect_fail 2 "--seeds -1: expected an integer from 0 to 1000" -- "$DKB" eval "$E" --data "$S" --seeds -1
expect_fail 2 "--seeds 1001: expected an integer" -- "$DKB" eval "$E" --data "$S" --seeds 1001
expect_fail 2 "--threshold 0: expected a positive number" -- "$DKB" eval "$E" --data "$S" --threshold 0
expect_fail 2 "--threshold fast: not a number" -- "$DKB" eval "$E" --data "$S" --threshold fast
expect_fail 2 "--threshold nan: not a number" -- "$DKB" eval "$E" --data "$S" --threshold nan
expect_fail 2 "--timeout 0: expected seconds" -- "$DKB" eval "$E" --data "$S" --timeout 0
expect_fail 2 "--mem-limit -2: expected GB" -- "$DKB" eval "$E" --data "$S" --mem-limit -2
expect_fail 2 "--min-runs 0: expected an integer from 1" -- "$DKB" eval "$E" --data "$S" --min-runs 0
expect_fail 2 "--min-seconds -1: expected seconds" -- "$DKB" eval "$E" --data "$S" --min-seconds -1
expect_fail 2 "--threads x: expected an integer" -- "$DKB" eval "$E" --data "$S" --threads x
expect_fail 2 "--format yaml: expected table, json or csv" -- "$DKB" eval "$E" --data "$S" --format yaml
expect_fail 2 "--queries: unknown query 'q23'" -- "$DKB" eval "$E" --data "$S" --queries q01,q23
expect_fail 2 "--queries: no query named" -- "$DKB" eval "$E" --data "$S" --queries ,
expect_fail 2 "eval: unknown option --frobnicate" -- "$DKB" eval "$E" --data "$S" --frobnicate
expect_fail 2 "eval: unknown option -x" -- "$DKB" eval "$E" --data "$S" -x
expect_fail 2 "eval: option --data needs a value" -- "$DKB" eval "$E" --data

# ---- --help ----
help=$("$DKB" eval --help) && grep -q "^usage: dkb eval DIR --data STORE" <<<"$help" || fail "eval --help"
help=$("$DKB" eval -h) && grep -q -- "--threshold X" <<<"$help" || fail "eval -h"
help=$("$DKB" --help) && grep -q "^  eval " <<<"$help" || fail "dkb --help lists eval"
pass "--help"

# ---- harness errors (exit 1) ----
expect_fail 1 "dkb eval: error: .*none/manifest.json: cannot open" -- "$DKB" eval "$E" --data "$WORK/none" --out "$WORK/r0"
expect_fail 1 "dkb eval: error: .*nodir: cannot open the candidate directory" -- \
    "$DKB" eval "$WORK/nodir" --data "$S" --out "$WORK/r0"
touch "$WORK/afile"
expect_fail 1 "dkb eval: error: .*afile.*(mkdir failed|not a directory)" -- "$DKB" eval "$E" --data "$S" --out "$WORK/afile/r"
expect_fail 1 "dkb eval: error: .*afile: the results path exists and is not a directory" -- \
    "$DKB" eval "$E" --data "$S" --out "$WORK/afile"
"$DKB" gen --sf 0.01 --part 1 --parts 2 --out "$WORK/slice" -q
expect_fail 1 "holds slice 1 of 2" -- "$DKB" eval "$E" --data "$WORK/slice" --out "$WORK/r0"

# ---- an empty directory: the evaluation runs, nothing to score ----
out=$("$DKB" eval "$E" --data "$S" --out "$WORK/r1" 2>"$WORK/err") || fail "empty dir exit $?"
grep -q "(no candidates)" <<<"$out" || fail "empty dir table: $out"
grep -q "^0 candidates, 0 valid: pass rate 0.0%" <<<"$out" || fail "empty dir totals: $out"
grep -q "overall speedup 1.00x" <<<"$out" || fail "empty dir speedup: $out"
grep -q "^results: $WORK/r1/results.json, $WORK/r1/summary.md" <<<"$out" || fail "results line: $out"
grep -q "note: no candidates to evaluate in $E" "$WORK/err" || fail "empty dir note: $(cat "$WORK/err")"
[ -s "$WORK/r1/results.json" ] && [ -s "$WORK/r1/summary.md" ] || fail "empty dir reports"
grep -q '"candidates":	\[\]' "$WORK/r1/results.json" || fail "empty results.json candidates"
grep -q '"harness_errors":	0' "$WORK/r1/results.json" || fail "empty results.json harness_errors"
grep -q '"command_line":	"dkb eval '"$E"' --data '"$S"' --out '"$WORK/r1"'"' "$WORK/r1/results.json" ||
    fail "command line recorded as typed"
[ -z "$(ls -A "$WORK/r1" | grep -v -e '^results.json$' -e '^summary.md$' -e '^work$')" ] || fail "stray files: $(ls -A "$WORK/r1")"
pass "empty directory: exit 0, reports written"
# -q: no notes; json and csv on stdout alone
"$DKB" eval "$E" --data "$S" --out "$WORK/r1" -q --format json >"$WORK/out.json" 2>"$WORK/err" || fail "json exit"
[ ! -s "$WORK/err" ] || fail "-q printed: $(cat "$WORK/err")"
head -c1 "$WORK/out.json" | grep -q '{' && tail -n1 "$WORK/out.json" | grep -q '^}$' || fail "json output"
grep -q '"seeds":	\[0, [0-9]*, [0-9]*, [0-9]*, [0-9]*, [0-9]*\]' "$WORK/out.json" || fail "5 seeds besides 0"
"$DKB" eval "$E" --data "$S" --out "$WORK/r1" -q --format csv --seeds 0 >"$WORK/out.csv" || fail "csv exit"
[ "$(cat "$WORK/out.csv")" = "query,mode,class,valid,counted,baseline_ms,candidate_ms,raw_speedup,final_ms,speedup,floor_ms,time_floor,sha256,file,note" ] ||
    fail "csv output: $(cat "$WORK/out.csv")"
pass "-q, --format json, --format csv"

# ---- a real evaluation: an honest Q6 (full), a compile error (core), a missing q14 ----
C="$WORK/cands"
mkdir -p "$C"
cp "$ROOT/tests/candidates/honest/q06.full.c" "$C/"
printf '#include "dkb/candidate.h"\nint dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {\n    return in->nvec +\n}\n' >"$C/q06.core.c"
touch "$C/q6.full.c" "$C/notes.txt"
out=$("$DKB" eval "$C" --data "$S" --out "$WORK/r2" --queries q06,q14 --seeds 2 --min-runs 3 --min-seconds 0 \
    --warmup 1 --threads 2 2>"$WORK/err") || fail "eval exit $?: $out $(cat "$WORK/err")"
echo "$out"
grep -q "note: ignored q6.full.c" "$WORK/err" || fail "ignored note: $(cat "$WORK/err")"
grep -q "notes.txt" "$WORK/err" && fail "notes.txt is not candidate-like"
grep -Eq "^q06   full ok +[0-9.]+ +[0-9.]+ +[0-9.]+x" <<<"$out" || fail "q06 full row: $out"
grep -Eq "^q06   core compile_error +[0-9.]+ +- +1.00x" <<<"$out" || fail "q06 core row: $out"
grep -Eq "^q14   full missing +[0-9.]+ +- +1.00x .*no candidate file: baseline counted" <<<"$out" || fail "q14 full row: $out"
grep -Eq "^q14   core missing +[0-9.]+ +- +1.00x" <<<"$out" || fail "q14 core row: $out"
grep -q "^2 candidates, 1 valid: pass rate 50.0%" <<<"$out" || fail "totals: $out"
R="$WORK/r2/results.json"
sha=$(sha256sum "$C/q06.full.c" | cut -d' ' -f1)
grep -q "\"sha256\":	\"$sha\"" "$R" || fail "sha256 of q06.full.c in results.json"
grep -q '"class":	"compile_error"' "$R" || fail "compile_error class in results.json"
grep -q '"compile_log":	".*error' "$R" || fail "compile log kept"
grep -q '"queries":	"q06,q14"' "$R" || fail "queries recorded"
grep -Eq '"seeds":	\[0, [0-9]+, [0-9]+\]' "$R" || fail "seeds recorded"
grep -q '"cpu":	"' "$R" || fail "machine recorded"
grep -q '"ignored_files":	\["q6.full.c"\]' "$R" || fail "ignored files recorded"
M="$WORK/r2/summary.md"
grep -q "^| q06 | full | ok | " "$M" || fail "summary.md q06 row"
grep -q "^| q14 | core | missing | " "$M" || fail "summary.md q14 row"
grep -q "^| pass rate | 50.0% | 100.0% | 0.0% |" "$M" || fail "summary.md pass rate: $(cat "$M")"
[ -d "$WORK/r2/work/q06.full" ] || fail "scratch directory"
ls "$WORK/r2" | grep -q '\.tmp' && fail "temporary files left"
pass "honest q06 full, compile error, missing q14: table, results.json, summary.md"

# --mode full: only the full rows
out=$("$DKB" eval "$C" --data "$S" --out "$WORK/r3" --mode full --seeds 0 --min-runs 2 --min-seconds 0 -q --format csv) ||
    fail "mode full exit $?"
[ "$(grep -c '^q[0-9]' <<<"$out")" = 1 ] && grep -q '^q06,full,ok,1,' <<<"$out" || fail "mode full csv: $out"
pass "--mode full"
