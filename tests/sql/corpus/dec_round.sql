SELECT round(avg(l_quantity), 2) AS a, round(sum(l_extendedprice) / 1000, 1) AS b FROM lineitem
