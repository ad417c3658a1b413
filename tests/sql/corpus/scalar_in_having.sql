SELECT o_orderpriority, count(*) AS n FROM orders GROUP BY o_orderpriority HAVING count(*) > (SELECT count(*) / 6 FROM orders) ORDER BY 1
