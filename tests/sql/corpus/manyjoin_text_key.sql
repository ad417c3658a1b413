SELECT s_name, count(*) AS n, max(c_acctbal) AS m, count(DISTINCT c_mktsegment) AS segs FROM supplier JOIN customer ON s_nationkey = c_nationkey WHERE s_suppkey <= 20 GROUP BY s_name ORDER BY s_name
