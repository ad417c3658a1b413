SELECT count(*), count(c_custkey), count(s_suppkey) FROM (SELECT * FROM customer WHERE c_custkey < 100) c FULL JOIN (SELECT * FROM supplier WHERE s_suppkey < 50) s ON c_custkey = s_suppkey
