SELECT count(*) FROM region WHERE EXISTS (SELECT 1 FROM nation WHERE n_nationkey = 24)
