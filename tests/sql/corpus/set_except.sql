SELECT c_custkey FROM customer EXCEPT SELECT o_custkey FROM orders ORDER BY 1
