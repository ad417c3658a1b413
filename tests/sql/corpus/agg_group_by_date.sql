SELECT o_orderdate, count(*) AS n FROM orders WHERE o_orderdate < DATE '1992-01-10' GROUP BY o_orderdate ORDER BY o_orderdate
