SELECT l_shipmode, count(*) AS late FROM lineitem WHERE l_receiptdate > l_commitdate + 20 GROUP BY 1 ORDER BY 1
