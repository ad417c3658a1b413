SELECT count(*) FROM (SELECT o_orderstatus AS s FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_orderkey < 300) t WHERE s IS DISTINCT FROM 'F'
