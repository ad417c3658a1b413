SELECT sum(l_linenumber) AS s, sum(p_size) AS t FROM lineitem, part WHERE l_partkey = p_partkey
