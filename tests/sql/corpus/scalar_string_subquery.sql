SELECT s_suppkey, (SELECT n_name FROM nation WHERE n_nationkey = s_nationkey) AS nation FROM supplier WHERE s_suppkey < 12 ORDER BY s_suppkey
