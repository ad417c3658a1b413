SELECT count(*) FROM region WHERE NOT EXISTS (SELECT 1 FROM nation WHERE n_nationkey = 99)
