SELECT c_custkey, o_orderdate FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_orderkey < 100 WHERE c_custkey < 20 ORDER BY o_orderdate DESC, c_custkey
