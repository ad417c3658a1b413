SELECT o_custkey, count(*) AS n, sum(o_totalprice) AS t FROM orders GROUP BY o_custkey ORDER BY n DESC, o_custkey LIMIT 20
