SELECT year(l_shipdate) AS y, month(l_shipdate) AS m, count(*) AS n FROM lineitem WHERE l_shipdate < DATE '1993-01-01' GROUP BY 1, 2 ORDER BY 1, 2
