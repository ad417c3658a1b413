SELECT r_name, n_name FROM region CROSS JOIN nation WHERE n_nationkey < 3 ORDER BY 1, 2
