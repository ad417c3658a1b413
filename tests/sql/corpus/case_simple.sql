SELECT o_orderkey, CASE o_orderstatus WHEN 'F' THEN 'finished' WHEN 'O' THEN 'open' ELSE 'partial' END AS s FROM orders WHERE o_orderkey < 40 ORDER BY o_orderkey
