SELECT extract(year FROM o_orderdate) AS y, extract(quarter FROM o_orderdate) AS q, count(*) AS n FROM orders GROUP BY 1, 2 ORDER BY 1, 2
