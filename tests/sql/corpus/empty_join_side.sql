SELECT n_name, count(s_suppkey) AS c FROM nation LEFT JOIN (SELECT * FROM supplier WHERE s_acctbal > 100000) s ON s_nationkey = n_nationkey GROUP BY n_name ORDER BY n_name
