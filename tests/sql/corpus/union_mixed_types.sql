SELECT n_nationkey AS k FROM nation UNION ALL SELECT CAST(r_regionkey AS BIGINT) FROM region ORDER BY k
