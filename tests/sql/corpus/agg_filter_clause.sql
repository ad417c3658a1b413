SELECT count(*) FILTER (WHERE l_returnflag = 'R') AS r, sum(l_quantity) FILTER (WHERE l_discount > 0.05) AS q FROM lineitem
