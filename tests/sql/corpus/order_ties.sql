SELECT c_nationkey, c_mktsegment FROM customer WHERE c_custkey < 100 ORDER BY c_nationkey
