SELECT count(*) AS n FROM lineitem l1 WHERE l1.l_shipdate < DATE '1992-03-01' AND EXISTS (SELECT 1 FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
