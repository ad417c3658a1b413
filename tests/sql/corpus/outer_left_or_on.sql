SELECT r_name, count(n_nationkey) AS c FROM region LEFT JOIN nation ON n_regionkey = r_regionkey OR n_nationkey = r_regionkey GROUP BY r_name ORDER BY r_name
