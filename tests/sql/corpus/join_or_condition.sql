SELECT count(*) FROM nation n, region r WHERE n.n_regionkey = r.r_regionkey OR n.n_nationkey = r.r_regionkey
