SELECT l_returnflag, sum(CAST(l_extendedprice AS DOUBLE)) AS s FROM lineitem GROUP BY 1 ORDER BY 1
