SELECT count(*) FROM lineitem WHERE (l_partkey, l_suppkey) IN (SELECT ps_partkey, ps_suppkey FROM partsupp WHERE ps_supplycost < 10)
