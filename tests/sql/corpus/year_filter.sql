SELECT count(*) FROM orders WHERE year(o_orderdate) = 1995 AND month(o_orderdate) IN (1, 2)
