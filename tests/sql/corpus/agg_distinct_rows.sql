SELECT DISTINCT c_nationkey, c_mktsegment FROM customer ORDER BY 1, 2
