SELECT c_custkey, (SELECT sum(o_totalprice) FROM orders WHERE o_custkey = c_custkey) AS t FROM customer WHERE c_custkey < 20 ORDER BY c_custkey
