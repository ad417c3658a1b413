SELECT day(o_orderdate) AS d, count(*) AS n FROM orders GROUP BY 1 ORDER BY 1
