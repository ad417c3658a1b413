SELECT c_custkey, (CASE WHEN c_custkey % 3 = 0 THEN NULL ELSE c_nationkey END) IN (SELECT n_nationkey FROM nation WHERE n_regionkey = 1) AS m FROM customer WHERE c_custkey < 20 ORDER BY 1
