SELECT avg(l_receiptdate - l_shipdate) AS transit, max(l_receiptdate - l_shipdate) AS mx FROM lineitem
