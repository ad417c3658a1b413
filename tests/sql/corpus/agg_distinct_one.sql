SELECT DISTINCT o_orderstatus FROM orders ORDER BY 1
