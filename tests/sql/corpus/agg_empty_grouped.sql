SELECT l_shipmode, sum(l_quantity) FROM lineitem WHERE l_quantity > 1000 GROUP BY l_shipmode
