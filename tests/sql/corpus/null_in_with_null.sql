SELECT n_nationkey, n_nationkey IN (SELECT CASE WHEN r_regionkey = 0 THEN NULL ELSE r_regionkey END FROM region) AS m FROM nation ORDER BY 1
