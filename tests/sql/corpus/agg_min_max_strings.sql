SELECT min(n_name), max(n_name) FROM nation
