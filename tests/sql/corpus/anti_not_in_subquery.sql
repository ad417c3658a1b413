SELECT count(*) FROM part WHERE p_partkey NOT IN (SELECT ps_partkey FROM partsupp WHERE ps_availqty > 5000)
