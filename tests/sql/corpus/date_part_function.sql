SELECT date_part('month', o_orderdate) AS m, count(*) AS n FROM orders WHERE o_orderdate < DATE '1992-06-01' GROUP BY 1 ORDER BY 1
