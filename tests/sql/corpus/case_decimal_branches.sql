SELECT sum(CASE WHEN l_returnflag = 'R' THEN l_extendedprice ELSE l_extendedprice * 0.5 END) AS s FROM lineitem
