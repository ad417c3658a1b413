SELECT count(*) FROM customer WHERE c_name LIKE 'Customer#000000010'
