SELECT o_orderkey, o_orderdate + INTERVAL 1 DAY AS d FROM orders WHERE o_orderkey < 10
