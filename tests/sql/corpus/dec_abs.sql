SELECT sum(abs(c_acctbal)) AS s FROM customer
