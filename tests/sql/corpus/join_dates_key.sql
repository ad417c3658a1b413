SELECT count(*) FROM orders o, lineitem l WHERE o.o_orderdate = l.l_shipdate AND o.o_orderkey < 1000
