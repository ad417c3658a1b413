SELECT replace(r_name, 'A', 'a') AS r FROM region ORDER BY r
