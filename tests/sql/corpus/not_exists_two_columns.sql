SELECT ps_suppkey % 7 AS b, count(*) AS n FROM partsupp WHERE NOT EXISTS (SELECT 1 FROM lineitem WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey AND l_shipmode = 'AIR') GROUP BY b ORDER BY b
