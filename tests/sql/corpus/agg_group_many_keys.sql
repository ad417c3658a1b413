SELECT l_returnflag, l_linestatus, l_shipmode, l_shipinstruct, count(*) AS n FROM lineitem GROUP BY ALL ORDER BY ALL
