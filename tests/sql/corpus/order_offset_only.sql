SELECT n_nationkey FROM nation ORDER BY n_nationkey OFFSET 20
