SELECT p_partkey, p_size * 2 + 1 AS s, p_retailprice - p_size AS r FROM part WHERE p_partkey < 20 ORDER BY p_partkey
