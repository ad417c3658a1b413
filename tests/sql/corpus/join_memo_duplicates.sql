-- join_memo_duplicates.sql: a correlated subquery over lineitem whose outer join's build side repeats keys (partsupp: four rows per part), so the first join's pairs cannot stand for the second's
SELECT count(*) AS n, sum(l_extendedprice) AS price
FROM lineitem, partsupp
WHERE l_partkey = ps_partkey AND ps_availqty < 200
  AND l_quantity < (SELECT 0.5 * avg(l2.l_quantity) FROM lineitem l2 WHERE l2.l_partkey = ps_partkey)
