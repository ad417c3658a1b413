SELECT count(*) FROM part WHERE p_size IN (SELECT ps_availqty FROM partsupp WHERE ps_partkey < 10) OR p_size = 49
