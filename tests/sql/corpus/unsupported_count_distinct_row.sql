SELECT count(DISTINCT (l_orderkey, l_linenumber)) FROM lineitem
