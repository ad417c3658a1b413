SELECT count(*) FROM partsupp p1 WHERE ps_supplycost < (SELECT avg(ps_supplycost) FROM partsupp p2 WHERE p2.ps_partkey = p1.ps_partkey)
