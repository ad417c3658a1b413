# sql_task.sh: a SQL file as a benchmark task (docs/sql.md, "SQL files as
# benchmark tasks"): `dkb eval --sql` at SF 0.01 with an honest full-mode C
# candidate (ok, timed against the translated baseline, seed 0 only) and a
# wrong one (wrong_answer, named row and column); a directory without the
# file (missing: the baseline stands); the refusals (--mode core, a bad
# task name, --queries with --sql); `dkb prompt --sql` (the SQL, the
# translated TensorPlan program, the result file name, no core mode);
# `dkb optimize --sql` end to end against the fake model server (a wrong
# answer, then the honest file: kept as valid); a task with declared
# parameters (ship_window.sql): an honest candidate ok on seed 0 and the
# drawn sets, one with seed 0's values written in caught on a drawn set,
# the bad declarations (one line with the file and line).
# The checks shared with sql_task_cuda.sh (the CUDA candidates) are in
# lib/sql_task.bash.
# libduckdb (the parent plans the SQL) comes from tools/install-deps.sh:
# when it cannot be found this test FAILS, unless DKB_ALLOW_NO_DUCKDB=1,
# where it exits 77.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/fake_server.bash"
source "$(dirname "$0")/lib/sql_task.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
T="$ROOT/tests/sql_tasks"
SQL="$T/returnflag_qty.sql"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q || fail "dkb gen --sf 0.01 failed"
QUICK=("${SQL_TASK_QUICK[@]}")
sql_task_need_duckdb "$S"

# ---- the answer the checks are against: DuckDB's own (dkb sql runs the translator) ----
"$DKB" sql --data "$S" -f "$SQL" --format csv >"$WORK/translated.csv" || fail "dkb sql -f $SQL"
grep -q "^l_returnflag,n,qty" "$WORK/translated.csv" || fail "translated result header: $(head -1 "$WORK/translated.csv")"

# ---- honest: ok, seed 0 only, the schema from the translated program ----
"$DKB" eval "$T/honest" --data "$S" --sql "$SQL" --out "$WORK/r_honest" "${QUICK[@]}" --format json -q \
    >"$WORK/honest.json" || fail "eval honest exit $?"
sql_task_check_ok "$WORK/honest.json" returnflag_qty 1 cpu c
pass "honest SQL-task candidate: ok, timed against the translated baseline, seed 0"

# ---- wrong (< where the SQL says <=): wrong_answer naming the cell ----
"$DKB" eval "$T/wrong" --data "$S" --sql "$SQL" --out "$WORK/r_wrong" "${QUICK[@]}" -q >"$WORK/wrong.txt" \
    || fail "eval wrong exit $?"
sql_task_check_wrong "$WORK/wrong.txt" returnflag_qty
pass "wrong SQL-task candidate: wrong_answer"

# ---- no file: missing, the baseline counted; csv output ----
mkdir -p "$WORK/empty"
"$DKB" eval "$WORK/empty" --data "$S" --sql "$SQL" --out "$WORK/r_empty" "${QUICK[@]}" --format csv -q >"$WORK/empty.csv" \
    || fail "eval empty exit $?"
sql_task_check_missing "$WORK/empty.csv" returnflag_qty
pass "no candidate file: a missing row, the translated baseline timed"
"$DKB" eval "$WORK/empty" --data "$S" --sql "$SQL" --out "$WORK/r_empty" "${QUICK[@]}" --seeds 3 2>&1 >/dev/null \
    | grep -q "note: a SQL task has no parameters: checked on seed 0 only (--seeds 3 not used)" || fail "no --seeds note"

# ---- declared parameters (ship_window.sql: a date, an int and a choice) ----
PSQL="$T/ship_window.sql"
"$DKB" eval "$T/honest" --data "$S" --sql "$PSQL" --out "$WORK/r_params" "${QUICK[@]}" --seeds 3 --format json -q \
    >"$WORK/params.json" 2>"$WORK/params.err" || fail "eval ship_window honest exit $?: $(cat "$WORK/params.err")"
grep -q "no parameters" "$WORK/params.err" && fail "a task with parameters got the seed-0 note"
sql_task_check_ok "$WORK/params.json" ship_window 4 cpu c
pass "SQL task with declared parameters: an honest candidate ok on seed 0 and 3 random parameter sets"
# a candidate with seed 0's values written in: right on seed 0, wrong on a drawn set
"$DKB" eval "$T/seed0_only" --data "$S" --sql "$PSQL" --out "$WORK/r_seed0" "${QUICK[@]}" --seeds 6 -q \
    >"$WORK/seed0.txt" || fail "eval seed0_only exit $?"
grep -Eq "^ship_window +full +wrong_answer .*seed [1-9][0-9]*: " "$WORK/seed0.txt" \
    || fail "a candidate ignoring the parameters was not caught on a drawn seed: $(cat "$WORK/seed0.txt")"
pass "a candidate that ignores the declared parameters: wrong_answer on a drawn parameter set"
# the translated baseline of seed 0 is the SQL at the defaults
# (the declarations dropped: dkb sql substitutes declared parameters itself)
sed -e "/-- dkb:param/d" -e "s/:ship_from/1994-01-01/g" -e "s/:max_qty/25/g" -e "s/:flag/R/g" "$PSQL" >"$WORK/ship_default.sql"
"$DKB" sql --data "$S" -f "$WORK/ship_default.sql" --check >/dev/null 2>"$WORK/check.err" \
    || fail "ship_window at its defaults: $(cat "$WORK/check.err")"
# dkb sql -f substitutes the declarations too: the defaults equal the
# hand-substituted file, --seed/--param give another set (checked against
# DuckDB), and a file without declarations refuses --seed/--param
"$DKB" sql --data "$S" -f "$PSQL" --format csv >"$WORK/ship_sql.csv" 2>"$WORK/ship_sql.err" \
    || fail "dkb sql -f ship_window: $(cat "$WORK/ship_sql.err")"
"$DKB" sql --data "$S" -f "$WORK/ship_default.sql" --format csv >"$WORK/ship_hand.csv" 2>/dev/null
cmp -s "$WORK/ship_sql.csv" "$WORK/ship_hand.csv" || fail "dkb sql -f at the declared defaults differs from the substituted file"
"$DKB" sql --data "$S" -f "$PSQL" --seed 3 --param max_qty=40 --param flag=A --check >/dev/null 2>"$WORK/ship_seed.err" \
    || fail "dkb sql -f ship_window --seed 3 --param: $(cat "$WORK/ship_seed.err")"
"$DKB" sql --data "$S" -f "$PSQL" --param flag=A --format csv >"$WORK/ship_a.csv" 2>/dev/null
cmp -s "$WORK/ship_a.csv" "$WORK/ship_sql.csv" && fail "--param flag=A gave the defaults' answer"
expect_fail 2 "unknown parameter 'nope' \(parameters: ship_from, max_qty, flag\)" -- \
    "$DKB" sql --data "$S" -f "$PSQL" --param nope=1
expect_fail 2 "parameter max_qty: 12 is not declared" -- "$DKB" sql --data "$S" -f "$PSQL" --param max_qty=12
expect_fail 2 "declares no parameters" -- "$DKB" sql --data "$S" -f "$SQL" --seed 2
pass "dkb sql -f with declared parameters: defaults, --seed and --param substituted; refusals"
p=$("$DKB" prompt --sql "$PSQL" --data "$S") || fail "dkb prompt --sql ship_window exit $?"
for want in "-- dkb:param ship_from date" "dkb_cand_params" "scan lineitem \["; do
    grep -q -- "$want" <<<"$p" || fail "prompt --sql ship_window lacks '$want'"
done
# a bad declaration: one line naming the file and line
printf -- '-- a bad one\n-- dkb:param n int 9..1\nSELECT count(*) AS c FROM lineitem WHERE l_quantity < :n\n' >"$WORK/bad_param.sql"
expect_fail 1 "bad_param.sql:2: dkb:param: range 9..1: LO is above HI" -- \
    "$DKB" eval "$T/honest" --data "$S" --sql "$WORK/bad_param.sql" --out "$WORK/r_bad"
printf -- '-- dkb:param n int 1..5\nSELECT count(*) AS c FROM lineitem\n' >"$WORK/unused_param.sql"
expect_fail 1 "unused_param.sql:1: dkb:param: parameter n is declared but the SQL never uses it" -- \
    "$DKB" prompt --sql "$WORK/unused_param.sql" --data "$S"
pass "declared parameters: bad declarations refused with the file and line"

# ---- refusals: one line each ----
expect_fail 2 "a SQL task \(--sql\) is full mode only" -- "$DKB" eval "$T/honest" --data "$S" --sql "$SQL" --mode core
expect_fail 2 "not with --sql" -- "$DKB" eval "$T/honest" --data "$S" --sql "$SQL" --queries q01
cp "$SQL" "$WORK/Bad-Name.sql"
expect_fail 1 "must be \[a-z0-9_\]\+" -- "$DKB" eval "$T/honest" --data "$S" --sql "$WORK/Bad-Name.sql" --out "$WORK/r_bad"
cp "$SQL" "$WORK/q06.sql"
expect_fail 1 "names a TPC-H query" -- "$DKB" eval "$T/honest" --data "$S" --sql "$WORK/q06.sql" --out "$WORK/r_bad"
echo "SELEC 1" >"$WORK/broken.sql"
expect_fail 1 "Parser Error|parser error|syntax error" -- "$DKB" eval "$T/honest" --data "$S" --sql "$WORK/broken.sql" --out "$WORK/r_bad"
expect_fail 2 "a SQL task \(--sql\) is full mode only" -- "$DKB" prompt --sql "$SQL" --data "$S" --mode core

# ---- dkb prompt --sql: the SQL, the translated program, the file to write ----
p=$("$DKB" prompt --sql "$SQL" --data "$S") || fail "dkb prompt --sql exit $?"
for want in "### system" "### user" "the SQL query returnflag_qty" "GROUP BY l_returnflag" \
    "TensorPlan program" "scan lineitem \[" "group .* rows by 1 key into 3 groups" "sort 3 rows by 1 key" \
    "dkb_candidate_full" "returnflag_qty.full.c" "Workload context" "lineitem.l_returnflag: 60175 rows" "Hardware context"; do
    grep -Eq -- "$want" <<<"$p" || fail "prompt --sql lacks '$want'"
done
grep -q "static int core(" <<<"$p" && fail "prompt --sql shows a hand-written plan"
pass "dkb prompt --sql: SQL, TensorPlan program, file name, contexts"

# ---- dkb optimize --sql against the fake model server: wrong, then honest ----
fence() { printf 'Here is the file.\n\n```c\n'; cat "$1"; printf '```\n'; }
fence "$T/wrong/returnflag_qty.full.c" >"$WORK/wrong.md"
fence "$T/honest/returnflag_qty.full.c" >"$WORK/correct.md"
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
json.dump({"steps": [{"content_file": w + "/wrong.md"}, {"content_file": w + "/correct.md"}]},
          open(w + "/script.json", "w"))
PY
export DKB_TEST_KEY="sk-test-$$"
expect_fail 2 "optimize: --mode core: a SQL task \(--sql\) is full mode only" -- "$DKB" optimize --model m --data "$S" --sql "$SQL" --mode core
start_server "$WORK/script.json"
R="$WORK/run"
"$DKB" optimize --model fake-coder --base-url "http://127.0.0.1:$PORT/v1" --api-key-env DKB_TEST_KEY \
    --data "$S" --sql "$SQL" --rounds 2 --jobs 1 --seeds 1 "${QUICK[@]}" --out "$R" >"$WORK/opt.out" 2>"$WORK/opt.err" \
    || { stop_server; fail "optimize --sql exit $?: $(cat "$WORK/opt.err")"; }
stop_server
classes=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "attempt": print(r["query"], r["mode"], r["round"], r["class"])' "$R/trajectory.jsonl")
want=$'returnflag_qty full 1 wrong_answer\nreturnflag_qty full 2 ok'
[ "$classes" = "$want" ] || fail "optimize --sql classes: got '$classes', want '$want'"
python3 - "$WORK/server.log" <<'PY' || fail "the model did not get the SQL task's prompt and feedback"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
bodies = [r["body"] for r in reqs if isinstance(r.get("body"), dict)]
first = bodies[0]["messages"][-1]["content"]
assert "GROUP BY l_returnflag" in first and "TensorPlan program" in first and "returnflag_qty.full.c" in first
assert any("wrong_answer" in b["messages"][-1]["content"] for b in bodies[1:]), "no wrong-answer feedback"
PY
[ -f "$R/prompts/returnflag_qty.full.md" ] || fail "no prompt file for the SQL task"
grep -q "returnflag_qty" "$WORK/opt.out" || fail "optimize summary lacks the task: $(cat "$WORK/opt.out")"
pass "dkb optimize --sql: wrong_answer then ok, the SQL task's prompt and feedback sent"
