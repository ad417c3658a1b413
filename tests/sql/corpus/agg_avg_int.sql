SELECT avg(p_size) AS a, avg(ps_availqty) AS b FROM part, partsupp WHERE p_partkey = ps_partkey
