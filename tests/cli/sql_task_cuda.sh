# sql_task_cuda.sh: a SQL file as a benchmark task on the CUDA backend
# (docs/sql.md, "SQL files as benchmark tasks"): `dkb eval --sql FILE
# --backend cuda` at SF 0.01, the candidate file DIR/NAME.full.cu, the
# translated baseline built and timed on the GPU in the worker. The
# candidates under tests/sql_tasks/honest_cuda (one kernel each over the
# resident columns) are ok on returnflag_qty.sql (seed 0: no parameters)
# and on ship_window.sql (seed 0 and 3 drawn parameter sets);
# tests/sql_tasks/wrong_cuda/returnflag_qty.full.cu (< where the SQL says
# <=) is wrong_answer naming the row and column; tests/sql_tasks/honest
# (C files only) is a missing row, its baseline still timed. The results
# are checked as sql_task.sh checks the C candidates' (lib/sql_task.bash).
# unit.test_harness_build_cuda builds these candidates without a GPU.
#
# Exits 77 (skipped) when dkb reports no usable GPU or no CUDA build; then,
# as sql_task.sh, when libduckdb is missing and DKB_ALLOW_NO_DUCKDB=1
# (without it a missing libduckdb is a failure).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/sql_task.bash"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
T="$ROOT/tests/sql_tasks"
SQL="$T/returnflag_qty.sql"
PSQL="$T/ship_window.sql"
S="$WORK/sf001"
"$DKB" gen --sf 0.01 --out "$S" -q || fail "dkb gen --sf 0.01 failed"
skip_without_cuda_eval "$S"
sql_task_need_duckdb "$S"
CUDA=(--backend cuda "${SQL_TASK_QUICK[@]}")

# the candidates' kernels ran: attribution counts the candidate's own
# kernels (or says why there is none)
own_kernels() {
    python3 - "$1" <<'PY' || fail "kernel attribution: $(cat "$1")"
import json, sys
(c,) = json.load(open(sys.argv[1]))["candidates"]
a = c.get("attribution")
if a is None:
    assert c.get("attribution_note"), "attribution null without a note"
    print("note: no kernel attribution:", c["attribution_note"])
else:
    assert a["own_kernels"] >= 1, a
PY
}

# ---- honest, no parameters: ok on seed 0, timed against the translated baseline on the GPU ----
"$DKB" eval "$T/honest_cuda" --data "$S" --sql "$SQL" --out "$WORK/r_honest" "${CUDA[@]}" --format json -q \
    >"$WORK/honest.json" 2>"$WORK/honest.err" || fail "eval honest_cuda exit $?: $(cat "$WORK/honest.err")"
sql_task_check_ok "$WORK/honest.json" returnflag_qty 1 cuda cu
own_kernels "$WORK/honest.json"
pass "honest CUDA SQL-task candidate: ok, timed against the translated baseline on the GPU, seed 0"

# ---- declared parameters: ok on seed 0 and 3 drawn sets ----
"$DKB" eval "$T/honest_cuda" --data "$S" --sql "$PSQL" --out "$WORK/r_params" "${CUDA[@]}" --seeds 3 --format json -q \
    >"$WORK/params.json" 2>"$WORK/params.err" || fail "eval ship_window honest_cuda exit $?: $(cat "$WORK/params.err")"
sql_task_check_ok "$WORK/params.json" ship_window 4 cuda cu
own_kernels "$WORK/params.json"
pass "CUDA SQL task with declared parameters: ok on seed 0 and 3 random parameter sets"

# ---- wrong (< where the SQL says <=): wrong_answer naming the cell ----
"$DKB" eval "$T/wrong_cuda" --data "$S" --sql "$SQL" --out "$WORK/r_wrong" "${CUDA[@]}" -q >"$WORK/wrong.txt" \
    2>"$WORK/wrong.err" || fail "eval wrong_cuda exit $?: $(cat "$WORK/wrong.err")"
sql_task_check_wrong "$WORK/wrong.txt" returnflag_qty
pass "wrong CUDA SQL-task candidate: wrong_answer"

# ---- a directory of C files only: no .cu, a missing row (the baseline timed on the GPU) ----
"$DKB" eval "$T/honest" --data "$S" --sql "$SQL" --out "$WORK/r_missing" "${CUDA[@]}" --format csv -q \
    >"$WORK/missing.csv" 2>"$WORK/missing.err" || fail "eval honest (C files) exit $?: $(cat "$WORK/missing.err")"
sql_task_check_missing "$WORK/missing.csv" returnflag_qty
pass "no .cu file: a missing row, the translated baseline timed on the GPU"
