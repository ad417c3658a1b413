SELECT l_discount, count(*) AS n FROM lineitem GROUP BY l_discount ORDER BY l_discount
