SELECT r1.r_name, r2.r_name AS later FROM region r1, region r2 WHERE r1.r_regionkey < r2.r_regionkey ORDER BY 1, 2
