SELECT c_mktsegment, count(*) AS n, sum(s_acctbal) AS s FROM customer JOIN supplier ON c_nationkey = s_nationkey WHERE length(c_phone || s_phone) > 40 GROUP BY c_mktsegment ORDER BY c_mktsegment
