SELECT c_custkey, o_totalprice + 1 AS t, o_totalprice * 2 AS d FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_orderkey < 40 WHERE c_custkey < 15 ORDER BY 1, 2
