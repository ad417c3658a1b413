SELECT substring(c_phone, 4) AS rest, left(c_name, 9) AS l, right(c_address, 2) AS r FROM customer WHERE c_custkey < 40 ORDER BY 1, 2
