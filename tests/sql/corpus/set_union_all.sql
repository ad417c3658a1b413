SELECT n_name AS name FROM nation WHERE n_regionkey = 0 UNION ALL SELECT r_name FROM region ORDER BY name
