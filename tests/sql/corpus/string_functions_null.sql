SELECT c_custkey, upper(o_orderpriority) AS p, length(o_orderpriority) AS l FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_orderkey < 40 WHERE c_custkey < 12 ORDER BY 1, 2
