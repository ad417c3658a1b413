SELECT l_orderkey, l_linenumber, l_extendedprice * (1 - l_discount) AS net, l_quantity * 2 AS q2 FROM lineitem WHERE l_orderkey < 100 ORDER BY l_orderkey, l_linenumber
