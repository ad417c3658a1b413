SELECT count(*) FROM orders WHERE o_orderpriority <> '1-URGENT' AND o_orderstatus = 'F'
