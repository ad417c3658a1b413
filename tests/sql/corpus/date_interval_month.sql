SELECT count(*) FROM orders WHERE o_orderdate >= DATE '1996-02-01' AND o_orderdate < DATE '1996-02-01' + INTERVAL '3' MONTH
