SELECT n_name FROM nation WHERE n_name NOT IN (SELECT n_name FROM nation WHERE n_regionkey = 0) ORDER BY n_name
