SELECT c_custkey, c_acctbal, CAST(c_acctbal AS INTEGER) % 7 AS m FROM customer WHERE c_custkey < 20 ORDER BY 1
