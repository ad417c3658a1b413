SELECT r_name, r_regionkey IN (SELECT n_regionkey FROM nation WHERE n_name LIKE 'C%') AS has_c FROM region ORDER BY r_name
