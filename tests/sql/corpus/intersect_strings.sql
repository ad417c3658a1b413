SELECT n_name FROM nation INTERSECT SELECT n_name FROM nation WHERE n_regionkey = 3 ORDER BY 1
