SELECT o_orderkey, o_totalprice / 3 AS third FROM orders WHERE o_orderkey < 20 ORDER BY o_orderkey
