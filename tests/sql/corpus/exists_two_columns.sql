SELECT count(*) AS n, sum(ps_availqty) AS q FROM partsupp WHERE EXISTS (SELECT 1 FROM lineitem WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey AND l_quantity > 49)
