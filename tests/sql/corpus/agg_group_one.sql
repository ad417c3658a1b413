SELECT l_returnflag, sum(l_extendedprice) AS s FROM lineitem GROUP BY l_returnflag ORDER BY l_returnflag
