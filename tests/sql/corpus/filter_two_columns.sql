SELECT count(*) FROM lineitem WHERE l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
