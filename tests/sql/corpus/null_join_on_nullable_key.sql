SELECT count(*) FROM (SELECT c_custkey, o_orderkey FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_orderkey < 300) t JOIN lineitem ON l_orderkey = t.o_orderkey
