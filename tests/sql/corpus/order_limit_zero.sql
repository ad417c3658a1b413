SELECT n_name FROM nation ORDER BY n_name LIMIT 0
