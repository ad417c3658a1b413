SELECT sum(l_quantity), avg(l_quantity), min(l_quantity), max(l_quantity), count(l_quantity) FROM lineitem
