SELECT count(*) AS n, count(DISTINCT s_suppkey) AS s, sum(c_acctbal) AS total, avg(s_acctbal) AS a FROM customer JOIN supplier ON c_nationkey = s_nationkey
