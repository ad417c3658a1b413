SELECT count(*) FROM nation, region WHERE n_name < r_name
