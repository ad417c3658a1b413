SELECT n_name, (SELECT max(s_acctbal) FROM supplier WHERE s_nationkey = n_nationkey AND s_acctbal > 9999) AS m FROM nation ORDER BY n_name
