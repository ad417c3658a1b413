SELECT c_custkey, sum(o_totalprice) AS t, max(o_orderdate) AS last FROM customer LEFT JOIN orders ON c_custkey = o_custkey WHERE c_custkey BETWEEN 1 AND 30 GROUP BY c_custkey ORDER BY c_custkey
