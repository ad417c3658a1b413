SELECT count(DISTINCT l_suppkey) FROM lineitem
