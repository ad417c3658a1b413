SELECT n_name AS s FROM nation UNION ALL SELECT r_name FROM region UNION ALL SELECT c_mktsegment FROM (SELECT DISTINCT c_mktsegment FROM customer) ORDER BY s
