SELECT l_returnflag, l_linestatus, count(*) AS n, avg(l_discount) AS d FROM lineitem GROUP BY l_returnflag, l_linestatus ORDER BY 1, 2
