SELECT n_name, coalesce(s_name, 'none') AS s FROM nation LEFT JOIN supplier ON n_nationkey = s_nationkey AND s_acctbal > 9950 ORDER BY n_name, s
