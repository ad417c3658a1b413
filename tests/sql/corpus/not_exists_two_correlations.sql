SELECT count(*) FROM lineitem l1 WHERE l1.l_orderkey < 2000 AND NOT EXISTS (SELECT 1 FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_linenumber > l1.l_linenumber)
