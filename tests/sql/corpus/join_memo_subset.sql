-- join_memo_subset.sql: two joins probing lineitem's l_partkey, the second's parts a subset of the first's (at SF 0.1 the translator takes the second's pairs from the first join's)
SELECT 'all' AS k, count(*) AS n, sum(l_quantity) AS q FROM lineitem JOIN part ON l_partkey = p_partkey WHERE p_size = 1
UNION ALL
SELECT 'brand', count(*), sum(l_quantity) FROM lineitem JOIN part ON l_partkey = p_partkey WHERE p_size = 1 AND p_brand = 'Brand#11'
UNION ALL
SELECT 'other', count(*), sum(l_quantity) FROM lineitem JOIN part ON l_partkey = p_partkey WHERE p_size = 2
ORDER BY k
