SELECT sum(c_acctbal) AS s, min(c_acctbal) AS mn, avg(c_acctbal) AS av FROM customer WHERE c_acctbal < 0
