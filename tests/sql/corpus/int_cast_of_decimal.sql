SELECT c_custkey, CAST(c_acctbal AS INTEGER) AS i FROM customer WHERE c_custkey < 15 ORDER BY 1
