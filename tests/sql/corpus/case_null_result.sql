SELECT n_name, CASE WHEN n_regionkey = 1 THEN n_nationkey END AS k FROM nation ORDER BY n_name
