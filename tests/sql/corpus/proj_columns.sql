SELECT n_nationkey, n_name, n_regionkey FROM nation ORDER BY n_nationkey
