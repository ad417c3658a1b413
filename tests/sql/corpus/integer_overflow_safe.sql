SELECT sum(CAST(o_orderkey AS BIGINT) * 1000000) AS s FROM orders
