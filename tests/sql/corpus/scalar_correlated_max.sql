SELECT o_custkey, o_orderkey, o_totalprice FROM orders o1 WHERE o_totalprice = (SELECT max(o_totalprice) FROM orders o2 WHERE o2.o_custkey = o1.o_custkey) AND o_custkey < 30 ORDER BY 1, 2
