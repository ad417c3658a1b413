# sql_task.bash: helpers for the SQL-task tests (sourced after common.bash,
# not run), shared by tests/cli/sql_task.sh (CTest cli.sql_task, the CPU
# backend) and tests/cli/sql_task_cuda.sh (cli.sql_task_cuda, the same
# tasks with CUDA candidates on the GPU), so both judge `dkb eval --sql`
# the same way (docs/sql.md, "SQL files as benchmark tasks").
#
#   SQL_TASK_QUICK              the timing options of every eval here
#   sql_task_need_duckdb STORE  libduckdb present (the parent plans the SQL)?
#                               Without it: exit 77 when DKB_ALLOW_NO_DUCKDB=1,
#                               else FAIL
#   sql_task_check_ok JSON TASK NSEEDS BACKEND EXT
#                               the results (--format json) of an honest
#                               candidate: one row TASK, full mode, ok and
#                               valid, checked on NSEEDS seeds (the first 0:
#                               NSEEDS 1 means [0] alone), every check ok,
#                               both sides timed (>= 3 runs), bytes read and
#                               a floor; config: the SQL file TASK.sql, the
#                               backend BACKEND; the file TASK.full.EXT
#   sql_task_check_wrong OUT TASK
#                               the table output OUT of a wrong candidate:
#                               wrong_answer on seed 0, naming row and column
#                               (n or qty) and what it got
#   sql_task_check_missing CSV TASK
#                               the csv output CSV of a directory without the
#                               file: a missing row (the baseline still timed)
SQL_TASK_QUICK=(--warmup 1 --min-runs 3 --min-seconds 0.05 --threads 1 --timeout 60)

sql_task_need_duckdb() { need_duckdb "$1"; }

sql_task_check_ok() {
    python3 - "$@" <<'PY' || fail "$2 results: $(cat "$1")"
import json, sys
path, task, nseeds, backend, ext = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
d = json.load(open(path))
cfg = d["config"]
seeds = cfg["seeds"]
assert len(seeds) == nseeds and seeds[0] == 0, seeds
assert cfg["modes"] == ["full"], cfg["modes"]
assert cfg["sql_file"].endswith(task + ".sql"), cfg["sql_file"]
assert cfg["backend"] == backend, cfg["backend"]
(c,) = d["candidates"]
assert c["query"] == task and c["mode"] == "full", c
assert c["file"].endswith(task + ".full." + ext), c["file"]
assert c["class"] == "ok" and c["valid"], c
assert [x["seed"] for x in c["checks"]] == seeds and all(x["ok"] for x in c["checks"]), c["checks"]
assert c["baseline_ms"]["runs"] >= 3 and c["candidate_ms"]["runs"] >= 3, c
assert c["bytes_read"] > 0 and c["floor_ms"] > 0, c
PY
}

sql_task_check_wrong() {
    grep -Eq "^$2 +full +wrong_answer .*seed 0: row [0-9]+, column (n|qty): got" "$1" \
        || fail "wrong candidate not judged wrong_answer: $(cat "$1")"
}

sql_task_check_missing() {
    grep -q "^$2,full,missing,0,0," "$1" || fail "missing row: $(cat "$1")"
}
