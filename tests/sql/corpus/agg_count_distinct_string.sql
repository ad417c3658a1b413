SELECT count(DISTINCT o_clerk) AS clerks, count(DISTINCT o_orderpriority) AS prios FROM orders
