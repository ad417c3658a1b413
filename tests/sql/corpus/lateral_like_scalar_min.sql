SELECT p_partkey, (SELECT min(ps_supplycost) FROM partsupp WHERE ps_partkey = p_partkey) AS m FROM part WHERE p_partkey < 30 ORDER BY p_partkey
