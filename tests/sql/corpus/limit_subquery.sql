SELECT sum(t) FROM (SELECT o_totalprice AS t FROM orders ORDER BY o_totalprice DESC, o_orderkey LIMIT 10) x
