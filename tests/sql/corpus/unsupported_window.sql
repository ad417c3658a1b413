SELECT n_name, row_number() OVER (ORDER BY n_name) AS rn FROM nation
