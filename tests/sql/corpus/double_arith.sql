SELECT sum(CAST(l_quantity AS DOUBLE) * 1.5) AS s FROM lineitem
