SELECT s_suppkey, -s_acctbal AS neg FROM supplier WHERE s_suppkey <= 10 ORDER BY s_suppkey
