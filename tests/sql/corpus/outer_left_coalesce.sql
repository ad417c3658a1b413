SELECT c_custkey, coalesce(sum(o_totalprice), 0) AS t FROM customer LEFT JOIN orders ON c_custkey = o_custkey WHERE c_custkey < 25 GROUP BY c_custkey ORDER BY c_custkey
