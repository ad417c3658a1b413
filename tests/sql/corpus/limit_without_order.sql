SELECT count(*) FROM (SELECT l_orderkey FROM lineitem LIMIT 100) t
