SELECT count(*), count(CASE WHEN l_discount > 0.05 THEN 1 END) AS high FROM lineitem
