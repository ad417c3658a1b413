SELECT * FROM region ORDER BY r_regionkey
