SELECT o_orderkey, CASE WHEN o_totalprice > 200000 THEN CASE WHEN o_orderpriority = '1-URGENT' THEN 2 ELSE 1 END ELSE 0 END AS c FROM orders WHERE o_orderkey < 60 ORDER BY o_orderkey
