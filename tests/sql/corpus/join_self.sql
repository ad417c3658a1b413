SELECT a.n_name, b.n_name AS other FROM nation a, nation b WHERE a.n_regionkey = b.n_regionkey AND a.n_nationkey < b.n_nationkey ORDER BY 1, 2
