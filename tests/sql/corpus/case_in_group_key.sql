SELECT CASE WHEN c_acctbal < 0 THEN 'debt' ELSE 'credit' END AS k, count(*) AS n, sum(c_acctbal) AS b FROM customer GROUP BY 1 ORDER BY 1
