SELECT n_name || '-' || r_name AS nr FROM nation JOIN region ON n_regionkey = r_regionkey ORDER BY nr
