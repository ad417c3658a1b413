SELECT count(*) FROM lineitem, partsupp WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey AND ps_availqty < 100
