SELECT o_orderpriority, o_orderkey FROM orders ORDER BY o_orderpriority, o_orderkey DESC LIMIT 12 OFFSET 3
