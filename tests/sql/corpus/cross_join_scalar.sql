SELECT count(*) FROM nation, (SELECT max(r_regionkey) AS m FROM region) t WHERE n_regionkey = t.m
