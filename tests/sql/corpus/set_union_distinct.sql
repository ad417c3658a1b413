SELECT c_nationkey AS k FROM customer UNION SELECT s_nationkey FROM supplier ORDER BY k
