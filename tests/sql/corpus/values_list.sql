SELECT v, n_name FROM (VALUES (1), (5), (7)) t(v) JOIN nation ON n_nationkey = v ORDER BY v
