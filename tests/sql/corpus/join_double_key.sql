SELECT count(*) FROM part p1 JOIN part p2 ON CAST(p1.p_retailprice AS DOUBLE) = CAST(p2.p_retailprice AS DOUBLE) WHERE p1.p_partkey < 200
