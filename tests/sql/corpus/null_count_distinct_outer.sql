SELECT count(DISTINCT o_orderstatus) AS s, count(o_orderstatus) AS n, count(*) AS c FROM customer LEFT JOIN orders ON c_custkey = o_custkey AND o_totalprice > 450000
