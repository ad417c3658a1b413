SELECT min(o_orderdate), max(o_orderdate) FROM orders
