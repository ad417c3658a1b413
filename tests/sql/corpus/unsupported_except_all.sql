SELECT n_regionkey FROM nation EXCEPT ALL SELECT r_regionkey FROM region ORDER BY 1
