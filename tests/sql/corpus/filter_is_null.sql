SELECT count(*) FROM nation WHERE n_name IS NULL
