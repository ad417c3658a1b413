SELECT c_custkey, coalesce(o_orderpriority, 'none') AS p FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_orderkey < 40 WHERE c_custkey < 15 ORDER BY 1, 2
