SELECT count(*) FROM customer WHERE c_name < 'Customer#000000100'
