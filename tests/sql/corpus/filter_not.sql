SELECT count(*) FROM supplier WHERE NOT (s_acctbal > 0)
