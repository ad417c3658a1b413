SELECT p_partkey FROM part WHERE EXISTS (SELECT 1 FROM partsupp WHERE ps_partkey = p_partkey AND ps_availqty > 9990) ORDER BY p_partkey
