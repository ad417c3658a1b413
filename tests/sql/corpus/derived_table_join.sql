SELECT t.n, count(*) AS k FROM (SELECT o_custkey, count(*) AS n FROM orders GROUP BY o_custkey) t JOIN customer ON c_custkey = t.o_custkey WHERE c_mktsegment = 'AUTOMOBILE' GROUP BY t.n ORDER BY t.n
