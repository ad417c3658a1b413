SELECT o_orderkey, CAST(o_totalprice AS DECIMAL(12,1)) AS t FROM orders WHERE o_orderkey < 20 ORDER BY 1
