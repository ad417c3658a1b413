SELECT c_name, c_acctbal FROM customer ORDER BY c_name DESC LIMIT 5
