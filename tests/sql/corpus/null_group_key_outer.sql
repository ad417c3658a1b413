SELECT o_orderstatus, count(*) AS n FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_orderkey < 200 GROUP BY o_orderstatus ORDER BY o_orderstatus NULLS FIRST
