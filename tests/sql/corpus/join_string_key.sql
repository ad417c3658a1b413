SELECT a.c_mktsegment, count(*) AS n FROM customer a JOIN (SELECT DISTINCT c_mktsegment FROM customer WHERE c_acctbal > 9990) b ON a.c_mktsegment = b.c_mktsegment GROUP BY 1 ORDER BY 1
