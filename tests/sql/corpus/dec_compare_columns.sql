SELECT count(*) FROM partsupp, part WHERE ps_partkey = p_partkey AND ps_supplycost * 2 > p_retailprice
