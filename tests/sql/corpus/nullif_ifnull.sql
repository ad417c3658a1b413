SELECT n_nationkey, nullif(n_regionkey, 0) AS r, ifnull(nullif(n_regionkey, 1), -1) AS s FROM nation ORDER BY 1
