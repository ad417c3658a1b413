SELECT count(*) FROM orders, customer WHERE o_custkey = c_custkey AND (c_nationkey = 3 OR o_orderpriority = '5-LOW')
