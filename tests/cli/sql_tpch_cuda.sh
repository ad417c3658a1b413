# sql_tpch_cuda.sh: sql_tpch.sh on the CUDA backend: the 22 TPC-H queries
# through the translator with `dkb sql --backend cuda` against the CUDA hand
# plans (`dkb run --backend cuda`), the DuckDB goldens and, for seed 0,
# DuckDB itself, at SF 0.01 and 0.1 for seeds 0..5. Exits 77 (CTest:
# skipped) without a GPU or in a build without CUDA, and, as sql_tpch.sh,
# when libduckdb is missing and DKB_ALLOW_NO_DUCKDB=1.
# its own work directory (sql_tpch.sh names its directory after itself)
DKB_SQL_BACKEND=cuda DKB_TMP="${DKB_TMP:-/tmp}/cuda" exec bash "$(dirname "$0")/sql_tpch.sh"
