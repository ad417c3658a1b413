SELECT c_custkey, count(o_orderkey) AS n FROM customer LEFT JOIN orders ON c_custkey = o_custkey WHERE c_custkey < 40 GROUP BY c_custkey ORDER BY c_custkey
