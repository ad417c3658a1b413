SELECT l_orderkey, l_linenumber, l_quantity FROM lineitem WHERE l_quantity = 50 ORDER BY l_orderkey, l_linenumber
