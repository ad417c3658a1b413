SELECT o_orderkey, o_orderdate + 30 AS due FROM orders WHERE o_orderkey < 20 ORDER BY o_orderkey
