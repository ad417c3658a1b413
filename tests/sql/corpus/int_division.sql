SELECT p_partkey, p_size // 4 AS q, p_size % 4 AS r FROM part WHERE p_partkey < 20 ORDER BY p_partkey
