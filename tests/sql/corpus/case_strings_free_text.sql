SELECT c_custkey, CASE WHEN c_acctbal > 5000 THEN c_name ELSE c_phone END AS label FROM customer WHERE c_custkey < 15 ORDER BY c_custkey
