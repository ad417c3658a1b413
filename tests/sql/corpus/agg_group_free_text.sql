SELECT c_name, count(*) AS n FROM customer, orders WHERE c_custkey = o_custkey AND c_custkey < 50 GROUP BY c_name ORDER BY c_name
