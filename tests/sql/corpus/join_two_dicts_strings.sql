SELECT n_name FROM nation JOIN region ON substring(n_name, 1, 1) = substring(r_name, 1, 1) ORDER BY n_name
