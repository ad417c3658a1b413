SELECT r_name, (SELECT max(n_nationkey) FROM nation) AS m FROM region ORDER BY r_name
