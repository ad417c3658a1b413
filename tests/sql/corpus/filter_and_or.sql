SELECT p_partkey, p_size, p_retailprice FROM part WHERE (p_size < 5 OR p_size > 45) AND p_retailprice > 1500 ORDER BY p_partkey
