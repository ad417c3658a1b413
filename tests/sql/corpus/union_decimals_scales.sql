SELECT l_discount AS v FROM lineitem WHERE l_orderkey = 1 UNION ALL SELECT 0.125 ORDER BY v
