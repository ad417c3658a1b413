SELECT l_returnflag, count(DISTINCT l_orderkey) AS orders, count(*) AS lines FROM lineitem GROUP BY 1 ORDER BY 1
