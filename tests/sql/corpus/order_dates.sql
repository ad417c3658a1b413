SELECT o_orderkey, o_orderdate FROM orders WHERE o_orderkey < 100 ORDER BY o_orderdate DESC, o_orderkey
