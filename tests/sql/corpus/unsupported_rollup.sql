SELECT l_returnflag, l_linestatus, count(*) FROM lineitem GROUP BY ROLLUP (l_returnflag, l_linestatus)
