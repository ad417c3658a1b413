SELECT n_name, CASE WHEN n_regionkey = 2 THEN n_nationkey END AS k FROM nation ORDER BY k NULLS FIRST, n_name
