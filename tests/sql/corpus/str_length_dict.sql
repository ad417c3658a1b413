SELECT n_name, length(n_name) AS l FROM nation ORDER BY l DESC, n_name
