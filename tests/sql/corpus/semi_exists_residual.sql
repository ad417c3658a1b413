SELECT count(*) FROM orders o WHERE EXISTS (SELECT * FROM lineitem l WHERE l.l_orderkey = o.o_orderkey AND l.l_receiptdate > o.o_orderdate + 90)
