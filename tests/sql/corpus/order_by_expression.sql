SELECT p_partkey, p_retailprice FROM part WHERE p_partkey < 50 ORDER BY p_retailprice * -1, p_partkey
