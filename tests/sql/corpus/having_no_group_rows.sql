SELECT l_suppkey, count(*) AS c FROM lineitem GROUP BY l_suppkey HAVING count(*) > 100000
