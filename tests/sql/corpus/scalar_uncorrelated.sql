SELECT count(*) FROM orders WHERE o_totalprice > (SELECT avg(o_totalprice) FROM orders)
