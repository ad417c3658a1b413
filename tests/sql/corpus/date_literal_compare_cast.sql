SELECT count(*) FROM orders WHERE o_orderdate = '1996-01-02'
