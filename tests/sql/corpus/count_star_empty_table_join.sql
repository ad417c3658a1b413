SELECT count(*) FROM nation n JOIN region r ON n.n_regionkey = r.r_regionkey AND r.r_name = 'NOWHERE'
