SELECT n_nationkey, 10 / n_regionkey AS d FROM nation ORDER BY 1
