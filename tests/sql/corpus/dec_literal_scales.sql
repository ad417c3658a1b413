SELECT sum(l_quantity * 0.001) AS a, sum(l_extendedprice * 1.5) AS b FROM lineitem
