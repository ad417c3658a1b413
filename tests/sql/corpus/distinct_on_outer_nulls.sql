SELECT DISTINCT o_orderstatus FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_orderkey < 100 ORDER BY 1 NULLS LAST
