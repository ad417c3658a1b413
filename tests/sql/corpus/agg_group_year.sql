SELECT year(o_orderdate) AS y, count(*) AS n, sum(o_totalprice) AS t FROM orders GROUP BY y ORDER BY y
