SELECT c_nationkey, max(c_name) AS m FROM customer GROUP BY 1 ORDER BY 1
