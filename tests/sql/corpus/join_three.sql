SELECT r_name, count(*) AS suppliers FROM supplier, nation, region WHERE s_nationkey = n_nationkey AND n_regionkey = r_regionkey GROUP BY r_name ORDER BY r_name
