SELECT c_custkey, round(c_acctbal, 0) AS r FROM customer WHERE c_custkey < 15 ORDER BY 1
