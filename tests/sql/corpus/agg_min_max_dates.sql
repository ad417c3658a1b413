SELECT l_shipmode, min(l_shipdate), max(l_receiptdate) FROM lineitem GROUP BY l_shipmode ORDER BY 1
