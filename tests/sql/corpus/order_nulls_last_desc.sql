SELECT n_name, CASE WHEN n_regionkey = 2 THEN n_nationkey END AS k FROM nation ORDER BY k DESC NULLS LAST, n_name
