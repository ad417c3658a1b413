SELECT sum(DISTINCT l_quantity) FROM lineitem
