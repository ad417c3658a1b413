SELECT p_partkey, p_size FROM part WHERE p_size IN (1, 7, 13, 50) ORDER BY p_partkey
