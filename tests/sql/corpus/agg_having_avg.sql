SELECT ps_suppkey, avg(ps_supplycost) AS c FROM partsupp GROUP BY ps_suppkey HAVING avg(ps_supplycost) < 450 ORDER BY ps_suppkey
