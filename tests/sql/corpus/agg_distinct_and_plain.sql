SELECT c_mktsegment, count(DISTINCT c_nationkey) AS nations, sum(c_acctbal) AS bal FROM customer GROUP BY 1 ORDER BY 1
